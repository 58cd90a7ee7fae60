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
    private let handle: MosquittoHandle
    private var state: MQTTConnectionState = .disconnected(reason: "not started")
    private var sessionNumber: UInt64 = 0
    private var subscriptions: [String] = []
    private var networkThreadHandlers: [(filter: String, handle: NetworkThreadHandler)] = []
    private var finalMessage: MQTTMessage?
    private var finalMid: Int32?
    private var finalAcknowledged = false
    private var lastRefusal: String?
    private var started = false

    public init(options: MQTTClientOptions, logger: Logger) {
        self.options = options
        self.logger = logger
        handle = MosquittoHandle(options: options)
        (events, eventSink) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .unbounded)
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
            if state == .connected { handle.subscribe(filter) }
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
            if state == .connected, subscriptions.contains(filter) { handle.subscribe(filter) }
        }
    }

    /// Hands a message to the current connection; returns its session and mid (0 for QoS 0).
    /// Throws `notConnected` while there is no connection: queue it yourself.
    public func publish(_ message: MQTTMessage) throws -> (session: UInt64, mid: Int32) {
        try lock.withLock {
            guard state == .connected else { throw MQTTError.notConnected }
            let (rc, mid) = handle.publish(message)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                if rc == MOSQ_ERR_NO_CONN.rawValue { throw MQTTError.notConnected }
                throw MQTTError.publishFailed(MosquittoHandle.describe(rc))
            }
            handle.acknowledgeAtOnce()
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
                    loopCode = handle.loop(timeoutMs: 100)
                    handle.acknowledgeAtOnce()
                    if loopCode != MOSQ_ERR_SUCCESS.rawValue { break }
                }
                if isStopRequested {
                    shutDownConnection()
                    break
                }
                let reason = lock.withLock { lastRefusal } ?? MosquittoHandle.describe(loopCode)
                endSession(reason: reason)
                if lock.withLock({ lastRefusal }) == nil { backoff.reset() }
            } else {
                endSession(reason: lock.withLock { lastRefusal } ?? MosquittoHandle.describe(connectCode))
            }
            let delay = backoff.nextDelay()
            logger.info("MQTT reconnecting", metadata: ["in_s": "\(String(format: "%.1f", delay))", "broker": "\(options.host):\(options.port)"])
            waitUnlessStopped(seconds: delay)
        }
        lock.withLock {
            state = .stopped
            handle.destroy()
        }
    }

    private var isStopRequested: Bool { thread.shouldStop }

    /// Creates a fresh libmosquitto session with every option set, and connects (blocking).
    private func connectOnce() -> Int32 {
        lock.withLock {
            lastRefusal = nil
            state = .connecting
            if let problem = handle.renew(userdata: Unmanaged.passUnretained(self).toOpaque()) {
                lastRefusal = problem
                return MOSQ_ERR_INVAL.rawValue
            }
            logger.debug("MQTT connecting", metadata: ["broker": "\(options.host):\(options.port)"])
            return handle.connect()
        }
    }

    /// A clean stop while connected: the final message, its PUBACK (bounded), DISCONNECT.
    private func shutDownConnection() {
        let deadline = ContinuousClock.now + .seconds(3)
        let connected = lock.withLock { state == .connected }
        if connected, let message = lock.withLock({ finalMessage }) {
            if let published = try? publish(message) {
                lock.withLock { finalMid = published.mid }
                while ContinuousClock.now < deadline, !lock.withLock({ finalAcknowledged }) {
                    if handle.loop(timeoutMs: 50) != MOSQ_ERR_SUCCESS.rawValue { break }
                }
            }
        }
        lock.withLock {
            // v5: if the final message was not acknowledged, 0x04 "disconnect with will message"
            // has the broker publish the will instead, so the offline state still gets out.
            handle.disconnect(reasonCode: finalAcknowledged || finalMessage == nil ? 0 : 4)
        }
        for _ in 0..<5 where handle.loop(timeoutMs: 20) == MOSQ_ERR_SUCCESS.rawValue {}
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
            let reason = "refused by broker: \(MosquittoHandle.reasonString(returnCode))"
            lock.withLock { lastRefusal = reason }
            return
        }
        let session = lock.withLock {
            state = .connected
            for filter in subscriptions { handle.subscribe(filter) }
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
}
