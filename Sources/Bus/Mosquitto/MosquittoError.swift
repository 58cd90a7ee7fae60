import CMosquitto
import Foundation

/// A libmosquitto result code (`MOSQ_ERR_*`), named once here at the wrapper: callers switch on
/// `kind`, never on the C integers. It carries the C name (for logs and bug reports) and
/// libmosquitto's own message (`mosquitto_strerror`, or `strerror(errno)` for `MOSQ_ERR_ERRNO`).
public struct MosquittoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What callers tell apart.
    public enum Kind: Sendable, Equatable {
        /// `MOSQ_ERR_NO_CONN`: no connection to send on.
        case noConnection
        /// `MOSQ_ERR_CONN_LOST`, `MOSQ_ERR_KEEPALIVE`: the connection went away.
        case connectionLost
        /// `MOSQ_ERR_CONN_REFUSED`, `MOSQ_ERR_AUTH`, `MOSQ_ERR_ACL_DENIED`: the broker said no.
        case connectionRefused
        /// `MOSQ_ERR_PROTOCOL`, `MOSQ_ERR_MALFORMED_PACKET`, `MOSQ_ERR_DUPLICATE_PROPERTY`, and
        /// what the broker does not support: a packet broke the protocol.
        case protocolViolation
        /// `MOSQ_ERR_PAYLOAD_SIZE`, `MOSQ_ERR_OVERSIZE_PACKET`: too large to send.
        case payloadSize
        /// `MOSQ_ERR_TLS`, `MOSQ_ERR_TLS_HANDSHAKE`, `MOSQ_ERR_OCSP`.
        case tls
        /// `MOSQ_ERR_ERRNO`, `MOSQ_ERR_EAI`, `MOSQ_ERR_LOOKUP`: the system (a socket, DNS).
        case system
        /// `MOSQ_ERR_INVAL`, `MOSQ_ERR_NOMEM` and the rest.
        case other
    }

    public let kind: Kind
    /// The C result code, e.g. 4.
    public let code: Int32
    /// The C name, e.g. `MOSQ_ERR_NO_CONN`.
    public let name: String
    /// libmosquitto's description, e.g. "The client is not currently connected.".
    public let message: String

    public var description: String { message }

    /// Reads `errno` for `MOSQ_ERR_ERRNO`: build it right after the failed call.
    init(code: Int32) {
        self.code = code
        let (name, kind) = Self.names[code] ?? ("MOSQ_ERR_\(code)", .other)
        self.name = name
        self.kind = kind
        message = code == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(code))
    }

    /// The error `code` names; nil for `MOSQ_ERR_SUCCESS`.
    static func failure(_ code: Int32) -> MosquittoError? {
        code == MOSQ_ERR_SUCCESS.rawValue ? nil : MosquittoError(code: code)
    }

    /// `MOSQ_ERR_INVAL`: what a session that cannot be set up reports.
    static var invalid: MosquittoError { MosquittoError(code: MOSQ_ERR_INVAL.rawValue) }

    /// Throws unless `code` is `MOSQ_ERR_SUCCESS`.
    static func check(_ code: Int32) throws(MosquittoError) {
        if let error = failure(code) { throw error }
    }

    private static let names: [Int32: (String, Kind)] = [
        MOSQ_ERR_NOMEM.rawValue: ("MOSQ_ERR_NOMEM", .other),
        MOSQ_ERR_PROTOCOL.rawValue: ("MOSQ_ERR_PROTOCOL", .protocolViolation),
        MOSQ_ERR_INVAL.rawValue: ("MOSQ_ERR_INVAL", .other),
        MOSQ_ERR_NO_CONN.rawValue: ("MOSQ_ERR_NO_CONN", .noConnection),
        MOSQ_ERR_CONN_REFUSED.rawValue: ("MOSQ_ERR_CONN_REFUSED", .connectionRefused),
        MOSQ_ERR_NOT_FOUND.rawValue: ("MOSQ_ERR_NOT_FOUND", .other),
        MOSQ_ERR_CONN_LOST.rawValue: ("MOSQ_ERR_CONN_LOST", .connectionLost),
        MOSQ_ERR_TLS.rawValue: ("MOSQ_ERR_TLS", .tls),
        MOSQ_ERR_PAYLOAD_SIZE.rawValue: ("MOSQ_ERR_PAYLOAD_SIZE", .payloadSize),
        MOSQ_ERR_NOT_SUPPORTED.rawValue: ("MOSQ_ERR_NOT_SUPPORTED", .protocolViolation),
        MOSQ_ERR_AUTH.rawValue: ("MOSQ_ERR_AUTH", .connectionRefused),
        MOSQ_ERR_ACL_DENIED.rawValue: ("MOSQ_ERR_ACL_DENIED", .connectionRefused),
        MOSQ_ERR_UNKNOWN.rawValue: ("MOSQ_ERR_UNKNOWN", .other),
        MOSQ_ERR_ERRNO.rawValue: ("MOSQ_ERR_ERRNO", .system),
        MOSQ_ERR_EAI.rawValue: ("MOSQ_ERR_EAI", .system),
        MOSQ_ERR_PROXY.rawValue: ("MOSQ_ERR_PROXY", .other),
        MOSQ_ERR_KEEPALIVE.rawValue: ("MOSQ_ERR_KEEPALIVE", .connectionLost),
        MOSQ_ERR_LOOKUP.rawValue: ("MOSQ_ERR_LOOKUP", .system),
        MOSQ_ERR_MALFORMED_PACKET.rawValue: ("MOSQ_ERR_MALFORMED_PACKET", .protocolViolation),
        MOSQ_ERR_DUPLICATE_PROPERTY.rawValue: ("MOSQ_ERR_DUPLICATE_PROPERTY", .protocolViolation),
        MOSQ_ERR_TLS_HANDSHAKE.rawValue: ("MOSQ_ERR_TLS_HANDSHAKE", .tls),
        MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue: ("MOSQ_ERR_QOS_NOT_SUPPORTED", .protocolViolation),
        MOSQ_ERR_OVERSIZE_PACKET.rawValue: ("MOSQ_ERR_OVERSIZE_PACKET", .payloadSize),
        MOSQ_ERR_OCSP.rawValue: ("MOSQ_ERR_OCSP", .tls),
        MOSQ_ERR_TIMEOUT.rawValue: ("MOSQ_ERR_TIMEOUT", .connectionLost),
        MOSQ_ERR_RETAIN_NOT_SUPPORTED.rawValue: ("MOSQ_ERR_RETAIN_NOT_SUPPORTED", .protocolViolation),
        MOSQ_ERR_TOPIC_ALIAS_INVALID.rawValue: ("MOSQ_ERR_TOPIC_ALIAS_INVALID", .protocolViolation),
        MOSQ_ERR_ADMINISTRATIVE_ACTION.rawValue: ("MOSQ_ERR_ADMINISTRATIVE_ACTION", .connectionLost),
        MOSQ_ERR_ALREADY_EXISTS.rawValue: ("MOSQ_ERR_ALREADY_EXISTS", .other),
    ]
}
