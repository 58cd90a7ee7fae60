import CMosquitto
import Foundation
import Supervision
import Logging

public enum MQTTError: Error, CustomStringConvertible {
    case notConnected
    case publishFailed(String)

    public var description: String {
        switch self {
        case .notConnected: "not connected to the broker"
        case .publishFailed(let reason): "publish failed: \(reason)"
        }
    }
}

/// One MQTT connection over libmosquitto, supervised by a network thread of its own.
///
/// The thread connects, runs `mosquitto_loop`, and on any failure (refused, TLS, lost) tears
/// the libmosquitto session down and connects again after a capped, jittered backoff, forever.
/// Tearing down discards libmosquitto's in-RAM queue on purpose: the owner keeps every message
/// it cares about (the outbox) and sends it again on the next connection, so libmosquitto never
/// holds the only copy of anything. For the same reason `publish` refuses while disconnected.
///
/// Each connection has a `session` number; acknowledgements name the session their mid belongs
/// to, since mids restart with every libmosquitto session.
public final class MQTTClient: @unchecked Sendable {
    public let events: AsyncStream<MQTTEvent>
    private let eventSink: AsyncStream<MQTTEvent>.Continuation
    private let options: MQTTClientOptions
    private let logger: Logger

    // Guards everything below, and every libmosquitto call made off the network thread.
    // Recursive: libmosquitto may run a callback inside a publish made under the lock.
    private let lock = NSRecursiveLock()
    private let thread = OwnedThread(name: "mqtt-network")
    private var handle: OpaquePointer?
    private var state: MQTTConnectionState = .disconnected(reason: "not started")
    private var sessionNumber: UInt64 = 0
    private var subscriptions: [String] = []
    private var networkThreadHandlers: [(filter: String, handle: NetworkThreadHandler)] = []
    private var finalMessage: MQTTMessage?
    private var finalMid: Int32?
    private var finalAcknowledged = false
    private var lastRefusal: String?
    private var started = false

    private static let libraryInitialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    public init(options: MQTTClientOptions, logger: Logger) {
        _ = Self.libraryInitialised
        self.options = options
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .unbounded)
    }

    deinit {
        if let handle { mosquitto_destroy(handle) }
    }

    public var connectionState: MQTTConnectionState { lock.withLock { state } }

    /// When the network thread last went round (uptime ns): for the watchdog, which must not be
    /// fed while this thread is stuck.
    public var lastLoopUptimeNanos: UInt64 { lock.withLock { lastLoop } }
    private var lastLoop = DispatchTime.now().uptimeNanoseconds

    private func markLoop() {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { lastLoop = now }
    }

    /// The current connection's number, to pair with the mids `publish` returns.
    public var session: UInt64 { lock.withLock { sessionNumber } }

    /// Starts the network thread. Call once.
    public func start() {
        lock.withLock {
            precondition(!started, "MQTTClient.start() called twice")
            started = true
        }
        thread.start { [self] in networkLoop() }
    }

    /// Adds a subscription (QoS 1); it is sent now if connected and again on every connect.
    public func subscribe(_ filter: String) {
        lock.withLock {
            subscriptions.append(filter)
            if state == .connected, let handle {
                mosquitto_subscribe_v5(handle, nil, filter, 1, 0, nil)
            }
        }
    }

    /// A handler run on the network thread itself; see `handleOnNetworkThread`.
    public typealias NetworkThreadHandler = @Sendable (MQTTIncomingMessage) -> Void

    /// Subscribes to `filter` and hands its messages to `handle` on the network thread, as they
    /// arrive, instead of to `events`: for a reply that should not wait for two thread hops (a
    /// reply published from `handle` goes out in the same turn of the loop). `handle` must be
    /// quick: while it runs, this connection reads and writes nothing else.
    public func handleOnNetworkThread(_ filter: String, _ handle: @escaping NetworkThreadHandler) {
        lock.withLock { networkThreadHandlers.append((filter: filter, handle: handle)) }
        subscribe(filter)
    }

    /// Sends SUBSCRIBE again for a filter already added (a stalled source asks the broker anew).
    public func resubscribe(_ filter: String) {
        lock.withLock {
            if state == .connected, let handle, subscriptions.contains(filter) {
                mosquitto_subscribe_v5(handle, nil, filter, 1, 0, nil)
            }
        }
    }

    /// Hands a message to the current connection; returns its session and mid (0 for QoS 0).
    /// Throws `notConnected` while there is no connection: queue it yourself.
    public func publish(_ message: MQTTMessage) throws -> (session: UInt64, mid: Int32) {
        try lock.withLock {
            guard state == .connected, let handle else { throw MQTTError.notConnected }
            var mid: Int32 = 0
            var properties = options.protocolVersion == 5 ? MosquittoProperties.make(message.properties) : nil
            defer { mosquitto_property_free_all(&properties) }
            let rc = message.payload.withUnsafeBytes { payload in
                mosquitto_publish_v5(
                    handle, &mid, message.topic, Int32(payload.count), payload.baseAddress, message.qos.rawValue,
                    message.retain, properties)
            }
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                if rc == MOSQ_ERR_NO_CONN.rawValue { throw MQTTError.notConnected }
                throw MQTTError.publishFailed(Self.describe(rc))
            }
            acknowledgeAtOnce()
            return (sessionNumber, mid)
        }
    }

    /// Stops the connection: publishes `finalMessage` (the offline status) and waits up to
    /// `timeout` for its acknowledgement when connected, disconnects, and ends the thread.
    public func stop(finalMessage: MQTTMessage? = nil, timeout: Double = 3) {
        let wasStarted = lock.withLock {
            self.finalMessage = finalMessage
            return started
        }
        thread.requestStop()
        guard wasStarted else { return }
        if !thread.join(timeout: timeout + 2) {
            logger.warning("MQTT network thread did not stop in time")
        }
        eventSink.finish()
    }

    // MARK: - The network thread

    private func networkLoop() {
        var backoff = Backoff(minimum: options.reconnectMinS, maximum: options.reconnectMaxS)
        while !isStopRequested {
            let connectCode = connectOnce()
            if connectCode == MOSQ_ERR_SUCCESS.rawValue {
                var loopCode: Int32 = MOSQ_ERR_SUCCESS.rawValue
                while !isStopRequested {
                    markLoop()
                    loopCode = mosquitto_loop(handle, 100, 1)
                    acknowledgeAtOnce()
                    if loopCode != MOSQ_ERR_SUCCESS.rawValue { break }
                }
                if isStopRequested {
                    shutDownConnection()
                    break
                }
                let reason = lock.withLock { lastRefusal } ?? Self.describe(loopCode)
                endSession(reason: reason)
                if lock.withLock({ lastRefusal }) == nil { backoff.reset() }
            } else {
                endSession(reason: lock.withLock { lastRefusal } ?? Self.describe(connectCode))
            }
            let delay = backoff.nextDelay()
            logger.info("MQTT reconnecting", metadata: ["in_s": "\(String(format: "%.1f", delay))", "broker": "\(options.host):\(options.port)"])
            waitUnlessStopped(seconds: delay)
        }
        lock.withLock {
            state = .stopped
            if let handle { mosquitto_destroy(handle) }
            handle = nil
        }
    }

    private var isStopRequested: Bool { thread.shouldStop }

    /// TCP_QUICKACK: Linux leaves quick-ACK mode again as soon as it sees a request/response
    /// pattern (data sent right after data received), so it is re-armed after every turn of the
    /// loop and every publish. Without it our ACK of the broker's PUBACK waits up to 40 ms, and a
    /// broker with Nagle on (mosquitto's default) holds its next packet to us — the next
    /// request — until that ACK comes.
    private func acknowledgeAtOnce() {
        guard options.lowLatencyTCP else { return }
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return }
        var on: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Creates a fresh libmosquitto session with every option set, and connects (blocking).
    private func connectOnce() -> Int32 {
        lock.withLock {
            lastRefusal = nil
            state = .connecting
            if handle == nil {
                handle = mosquitto_new(options.clientID, false, Unmanaged.passUnretained(self).toOpaque())
            } else {
                mosquitto_reinitialise(handle, options.clientID, false, Unmanaged.passUnretained(self).toOpaque())
            }
            guard let handle else { return MOSQ_ERR_NOMEM.rawValue }
            if let problem = configure(handle) {
                lastRefusal = problem
                return MOSQ_ERR_INVAL.rawValue
            }
            var properties: OpaquePointer? = nil
            defer { mosquitto_property_free_all(&properties) }
            if options.protocolVersion == 5 {
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), options.sessionExpiryS)
                mosquitto_property_add_int16(&properties, Int32(MQTT_PROP_RECEIVE_MAXIMUM.rawValue), options.receiveMaximum)
            }
            logger.debug("MQTT connecting", metadata: ["broker": "\(options.host):\(options.port)"])
            return mosquitto_connect_bind_v5(handle, options.host, Int32(options.port), Int32(options.keepaliveS), nil, properties)
        }
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
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                mosquitto_property_free_all(&properties)
                return "will: \(Self.describe(rc))"
            }
        }
        if let username = options.username {
            let rc = mosquitto_username_pw_set(handle, username, options.password)
            if rc != MOSQ_ERR_SUCCESS.rawValue { return "credentials: \(Self.describe(rc))" }
        }
        if let tls = options.tls {
            let rc = mosquitto_tls_set(handle, tls.cafile, nil, tls.certfile, tls.keyfile, nil)
            if rc != MOSQ_ERR_SUCCESS.rawValue { return "TLS setup: \(Self.describe(rc))" }
            mosquitto_tls_insecure_set(handle, tls.insecure)
        }
        return nil
    }

    /// A clean stop while connected: the final message, its PUBACK (bounded), DISCONNECT.
    private func shutDownConnection() {
        let deadline = Date().addingTimeInterval(3)
        let connected = lock.withLock { state == .connected }
        if connected, let message = lock.withLock({ finalMessage }) {
            if let published = try? publish(message) {
                lock.withLock { finalMid = published.mid }
                while Date() < deadline, !lock.withLock({ finalAcknowledged }) {
                    if mosquitto_loop(handle, 50, 1) != MOSQ_ERR_SUCCESS.rawValue { break }
                }
            }
        }
        lock.withLock {
            // v5: if the final message was not acknowledged, 0x04 "disconnect with will message"
            // has the broker publish the will instead, so the offline state still gets out.
            if let handle { mosquitto_disconnect_v5(handle, finalAcknowledged || finalMessage == nil ? 0 : 4, nil) }
        }
        for _ in 0..<5 where mosquitto_loop(handle, 20, 1) == MOSQ_ERR_SUCCESS.rawValue {}
        eventSink.yield(.disconnected(reason: "stopped"))
    }

    /// Drops the libmosquitto session after a failure; the next connect starts a new one.
    private func endSession(reason: String) {
        let wasConnected = lock.withLock {
            let was = state == .connected
            state = .disconnected(reason: reason)
            sessionNumber += 1
            return was
        }
        if wasConnected {
            logger.warning("MQTT connection lost", metadata: ["reason": "\(reason)"])
        } else {
            logger.warning("MQTT connect failed", metadata: ["reason": "\(reason)", "broker": "\(options.host):\(options.port)"])
        }
        eventSink.yield(.disconnected(reason: reason))
    }

    private func waitUnlessStopped(seconds: Double) {
        thread.pause(seconds: seconds) { markLoop() }
    }

    // MARK: - Callbacks (network thread)

    func didConnect(returnCode: Int32, receiveMaximum: Int?) {
        guard returnCode == 0 else {
            let reason = "refused by broker: \(String(cString: mosquitto_reason_string(returnCode)))"
            lock.withLock { lastRefusal = reason }
            return
        }
        let session = lock.withLock {
            state = .connected
            for filter in subscriptions {
                mosquitto_subscribe_v5(handle, nil, filter, 1, 0, nil)
            }
            return sessionNumber
        }
        logger.info("MQTT connected", metadata: ["broker": "\(options.host):\(options.port)", "client_id": "\(options.clientID)"])
        eventSink.yield(.connected(session: session, receiveMaximum: receiveMaximum))
    }

    func didDisconnect(returnCode: Int32) {
        guard returnCode != 0 else { return }
        logger.debug("MQTT disconnect callback", metadata: ["rc": "\(returnCode)"])
    }

    func didPublish(mid: Int32, reasonCode: Int32) {
        let session = lock.withLock {
            if mid == finalMid { finalAcknowledged = true }
            return sessionNumber
        }
        eventSink.yield(.published(session: session, mid: mid, reasonCode: reasonCode))
    }

    func didReceive(_ message: MQTTIncomingMessage) {
        let handlers = lock.withLock {
            networkThreadHandlers.filter { TopicRules.matches(filter: $0.filter, topic: message.topic) }
        }
        if handlers.isEmpty {
            eventSink.yield(.message(message))
        } else {
            for handler in handlers { handler.handle(message) }
        }
    }

    func didLog(level: Int32, text: String) {
        if level == MOSQ_LOG_ERR || level == MOSQ_LOG_WARNING {
            logger.notice("libmosquitto: \(text)")
        } else {
            logger.trace("libmosquitto: \(text)")
        }
    }

    static func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }
}
