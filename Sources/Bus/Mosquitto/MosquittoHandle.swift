import CMosquitto
import Foundation

/// One libmosquitto handle behind a small Swift API: create or reinitialise it, configure it from
/// `MQTTClientOptions` (protocol, callbacks, will, credentials, TLS), connect, run the loop,
/// publish, subscribe, disconnect. The connection's policy (when to connect again, what a session
/// is, when to stop) is `MQTTClient`'s; this type only speaks to the C library.
///
/// Every failing call throws a `MosquittoError`: no `MOSQ_ERR_*` integer leaves this file.
/// The C callbacks (`MosquittoCallbacks.swift`) find their way back to the owner through `userdata`.
///
/// Unchecked `Sendable`, and safe: libmosquitto documents its client calls as thread-safe once
/// `mosquitto_threaded_set` is on (set in `configure`), so `publish`/`subscribe` from other
/// threads may run beside `loop` on the network thread, as `MQTTClient` has them do. `pointer`
/// itself changes only in `renew`/`destroy`, on the network thread with `MQTTClient`'s
/// connection lock held, and every other thread reaches the handle under that same lock.
final class MosquittoHandle: @unchecked Sendable {
    let options: MQTTClientOptions
    private var pointer: OpaquePointer?

    private static let libraryInitialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    init(options: MQTTClientOptions) {
        _ = Self.libraryInitialised
        self.options = options
    }

    deinit { destroy() }

    /// A fresh libmosquitto session (the old one's in-RAM queue discarded), with every option
    /// set; nil when set up, else the problem.
    func renew(userdata: UnsafeMutableRawPointer) -> String? {
        if pointer == nil {
            pointer = mosquitto_new(options.clientID, false, userdata)
        } else {
            mosquitto_reinitialise(pointer, options.clientID, false, userdata)
        }
        guard let pointer else { return MosquittoError(code: MOSQ_ERR_NOMEM.rawValue).message }
        return configure(pointer)
    }

    /// Connects to `host`:`port` (blocking).
    func connect(host: String, port: Int) throws(MosquittoError) {
        guard let pointer else { throw MosquittoError(code: MOSQ_ERR_INVAL.rawValue) }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if options.protocolVersion == 5 {
            mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), options.sessionExpiryS)
            mosquitto_property_add_int16(&properties, Int32(MQTT_PROP_RECEIVE_MAXIMUM.rawValue), options.receiveMaximum)
        }
        try MosquittoError.check(
            mosquitto_connect_bind_v5(pointer, host, Int32(port), Int32(options.keepaliveS), nil, properties))
    }

    /// One turn of the network loop, waiting at most `timeoutMs`.
    func loop(timeoutMs: Int32) throws(MosquittoError) { try MosquittoError.check(mosquitto_loop(pointer, timeoutMs, 1)) }

    /// Hands `message` to libmosquitto; its mid (0 for QoS 0).
    func publish(_ message: MQTTMessage) throws(MosquittoError) -> Int32 {
        guard let pointer else { throw MosquittoError(code: MOSQ_ERR_NO_CONN.rawValue) }
        var mid: Int32 = 0
        var properties = options.protocolVersion == 5 ? MosquittoProperties.make(message.properties) : nil
        defer { mosquitto_property_free_all(&properties) }
        let rc = message.payload.withUnsafeBytes { payload in
            mosquitto_publish_v5(pointer, &mid, message.topic, Int32(payload.count), payload.baseAddress, message.qos.rawValue, message.retain, properties)
        }
        try MosquittoError.check(rc)
        return mid
    }

    /// SUBSCRIBE at QoS 1.
    func subscribe(_ filter: String) {
        guard let pointer else { return }
        mosquitto_subscribe_v5(pointer, nil, filter, 1, 0, nil)
    }

    /// DISCONNECT with a v5 reason code (0x04: "disconnect with will message").
    func disconnect(reasonCode: Int32) {
        guard let pointer else { return }
        mosquitto_disconnect_v5(pointer, reasonCode, nil)
    }

    /// TCP_QUICKACK: Linux leaves quick-ACK mode again as soon as it sees a request/response
    /// pattern (data sent right after data received), so it is re-armed after every turn of the
    /// loop and every publish. Without it our ACK of the broker's PUBACK waits up to 40 ms, and a
    /// broker with Nagle on (mosquitto's default) holds its next packet to us — the next
    /// request — until that ACK comes.
    func acknowledgeAtOnce() {
        guard options.lowLatencyTCP else { return }
        let socket = mosquitto_socket(pointer)
        guard socket >= 0 else { return }
        var on: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    func destroy() {
        if let pointer { mosquitto_destroy(pointer) }
        pointer = nil
    }

    /// Applies protocol, callbacks, will, credentials and TLS; returns a problem or nil.
    private func configure(_ handle: OpaquePointer) -> String? {
        mosquitto_threaded_set(handle, true)
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, options.protocolVersion == 5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        // Small messages go out at once instead of waiting on Nagle for the previous one's ACK.
        mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, options.lowLatencyTCP ? 1 : 0)
        mosquitto_connect_v5_callback_set(handle, mosquittoOnConnect)
        mosquitto_disconnect_v5_callback_set(handle, mosquittoOnDisconnect)
        mosquitto_publish_v5_callback_set(handle, mosquittoOnPublish)
        mosquitto_message_v5_callback_set(handle, mosquittoOnMessage)
        mosquitto_log_callback_set(handle, mosquittoOnLog)
        if let will = options.will {
            var properties = options.protocolVersion == 5 ? MosquittoProperties.make(will.properties) : nil
            let rc = will.payload.withUnsafeBytes { payload in
                mosquitto_will_set_v5(
                    handle, will.topic, Int32(payload.count), payload.baseAddress, will.qos.rawValue, will.retain, properties)
            }
            // On success libmosquitto owns (and frees) the will's property list; on failure we do.
            if let error = MosquittoError.failure(rc) {
                mosquitto_property_free_all(&properties)
                return "will: \(error.message)"
            }
        }
        if let username = options.username {
            let rc = mosquitto_username_pw_set(handle, username, options.password)
            if let error = MosquittoError.failure(rc) { return "credentials: \(error.message)" }
        }
        if let tls = options.tls {
            let rc = mosquitto_tls_set(handle, tls.cafile, nil, tls.certfile, tls.keyfile, nil)
            if let error = MosquittoError.failure(rc) { return "TLS setup: \(error.message)" }
            mosquitto_tls_insecure_set(handle, tls.insecure)
        }
        return nil
    }

    static func reasonString(_ code: Int32) -> String { String(cString: mosquitto_reason_string(code)) }
}
