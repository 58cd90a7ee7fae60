import CMosquitto
import Foundation
import Supervision
import Logging
import Synchronization

public enum MQTTError: Error, CustomStringConvertible {
    case notConnected
    case publishFailed(MosquittoError)

    public var description: String {
        switch self {
        case .notConnected: "not connected to the broker"
        case .publishFailed(let error): "publish failed: \(error.message)"
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
///
/// Ownership: `connection` guards the connection's state and every libmosquitto call made off
/// the network thread; `loop` runs outside it, so a publish never waits out a turn of the loop.
/// `on_publish` touches only `acknowledgements` (taken inside `connection` or alone, never the
/// other way round): with `mosquitto_threaded_set` libmosquitto runs callbacks from
/// `mosquitto_loop` only, but were one run inside a publish made under `connection` (as without
/// it, for QoS 0), it could not deadlock on that lock — the reason the lock this replaced was
/// recursive.
public final class MQTTClient: Sendable {
    public let events: AsyncStream<MQTTEvent>
    private let eventSink: AsyncStream<MQTTEvent>.Continuation
    private let options: MQTTClientOptions
    private let logger: Logger
    private let thread = OwnedThread(name: "mqtt-network")
    private let handle: MosquittoHandle

    private struct Connection {
        var state: MQTTConnectionState = .disconnected(reason: "not started")
        var subscriptions: [String] = []
        var finalMessage: MQTTMessage?
        var lastRefusal: String?
        var started = false
        /// Which of `options.brokers` this connection is for.
        var brokerIndex = 0
    }
    private let connection = Mutex(Connection())

    /// The session number and the final message's acknowledgement, which `on_publish` reads.
    private struct Acknowledgements {
        var sessionNumber: UInt64 = 0
        var finalMid: Int32?
        var finalAcknowledged = false
    }
    private let acknowledgements = Mutex(Acknowledgements())
    private let networkThreadHandlers = Mutex<[(filter: String, handle: NetworkThreadHandler)]>([])

    public init(options: MQTTClientOptions, logger: Logger) {
        self.options = options
        self.logger = logger
        handle = MosquittoHandle(options: options)
        (events, eventSink) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .unbounded)
    }

    public var connectionState: MQTTConnectionState { connection.withLock { $0.state } }

    /// `host:port` of the broker connected to, or tried next.
    public var broker: String {
        let brokers = options.brokers
        let broker = brokers[connection.withLock { $0.brokerIndex } % brokers.count]
        return "\(broker.host):\(broker.port)"
    }

    /// When the network thread last went round (uptime ns): for the watchdog, which must not be
    /// fed while this thread is stuck.
    public var lastLoopUptimeNanos: UInt64 { lastLoop.load(ordering: .relaxed) }
    private let lastLoop = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)

    private func markLoop() {
        lastLoop.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// The current connection's number, to pair with the mids `publish` returns.
    public var session: UInt64 { acknowledgements.withLock { $0.sessionNumber } }

    /// Starts the network thread. Call once.
    public func start() {
        connection.withLock {
            precondition(!$0.started, "MQTTClient.start() called twice")
            $0.started = true
        }
        thread.start { [self] in networkLoop() }
    }

    /// Adds a subscription (QoS 1); it is sent now if connected and again on every connect.
    public func subscribe(_ filter: String) {
        connection.withLock {
            $0.subscriptions.append(filter)
            if $0.state == .connected { handle.subscribe(filter) }
        }
    }

    /// A handler run on the network thread itself; see `handleOnNetworkThread`.
    public typealias NetworkThreadHandler = @Sendable (MQTTIncomingMessage) -> Void

    /// Subscribes to `filter` and hands its messages to `handle` on the network thread, as they
    /// arrive, instead of to `events`: for a reply that should not wait for two thread hops (a
    /// reply published from `handle` goes out in the same turn of the loop). `handle` must be
    /// quick: while it runs, this connection reads and writes nothing else.
    public func handleOnNetworkThread(_ filter: String, _ handle: @escaping NetworkThreadHandler) {
        networkThreadHandlers.withLock { $0.append((filter: filter, handle: handle)) }
        subscribe(filter)
    }

    /// Sends SUBSCRIBE again for a filter already added (a stalled source asks the broker anew).
    public func resubscribe(_ filter: String) {
        connection.withLock {
            if $0.state == .connected, $0.subscriptions.contains(filter) { handle.subscribe(filter) }
        }
    }

    /// Hands a message to the current connection; returns its session and mid (0 for QoS 0).
    /// Throws `notConnected` while there is no connection: queue it yourself.
    public func publish(_ message: MQTTMessage) throws -> (session: UInt64, mid: Int32) {
        try connection.withLock { (connection) throws(MQTTError) -> (session: UInt64, mid: Int32) in
            guard connection.state == .connected else { throw MQTTError.notConnected }
            let mid: Int32
            do throws(MosquittoError) {
                mid = try handle.publish(message)
            } catch {
                switch error.kind {
                case .noConnection: throw MQTTError.notConnected
                default: throw MQTTError.publishFailed(error)
                }
            }
            handle.acknowledgeAtOnce()
            return (acknowledgements.withLock { $0.sessionNumber }, mid)
        }
    }

    /// Stops the connection: publishes `finalMessage` (the offline status) and waits up to
    /// `timeout` for its acknowledgement when connected, disconnects, and ends the thread.
    public func stop(finalMessage: MQTTMessage? = nil, timeout: Double = 3) {
        let wasStarted = connection.withLock {
            $0.finalMessage = finalMessage
            return $0.started
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
            do throws(MosquittoError) {
                try connectOnce()
                var loopError: MosquittoError?
                while !isStopRequested {
                    markLoop()
                    do throws(MosquittoError) { try handle.loop(timeoutMs: 100) } catch { loopError = error }
                    handle.acknowledgeAtOnce()
                    if loopError != nil { break }
                }
                if isStopRequested {
                    shutDownConnection()
                    break
                }
                let refusal = connection.withLock { $0.lastRefusal }
                endSession(reason: refusal ?? loopError?.message ?? "network loop ended")
                if refusal == nil { backoff.reset() }
            } catch {
                endSession(reason: connection.withLock { $0.lastRefusal } ?? error.message)
            }
            let delay = backoff.nextDelay()
            logger.info("MQTT reconnecting", metadata: ["in_s": "\(String(format: "%.1f", delay))", "broker": "\(broker)"])
            waitUnlessStopped(seconds: delay)
        }
        connection.withLock {
            $0.state = .stopped
            handle.destroy()
        }
    }

    private var isStopRequested: Bool { thread.shouldStop }

    /// Creates a fresh libmosquitto session with every option set, and connects (blocking).
    /// A session that cannot be set up throws with the problem kept as `lastRefusal`.
    private func connectOnce() throws(MosquittoError) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        try connection.withLock { (connection) throws(MosquittoError) in
            connection.lastRefusal = nil
            connection.state = .connecting
            if let problem = handle.renew(userdata: userdata) {
                connection.lastRefusal = problem
                throw MosquittoError.invalid
            }
            let brokers = options.brokers
            let broker = brokers[connection.brokerIndex % brokers.count]
            logger.debug("MQTT connecting", metadata: ["broker": "\(broker.host):\(broker.port)"])
            try handle.connect(host: broker.host, port: broker.port)
        }
    }

    /// A clean stop while connected: the final message, its PUBACK (bounded), DISCONNECT.
    private func shutDownConnection() {
        let deadline = ContinuousClock.now + .seconds(3)
        let (connected, finalMessage) = connection.withLock { ($0.state == .connected, $0.finalMessage) }
        if connected, let finalMessage {
            if let published = try? publish(finalMessage) {
                acknowledgements.withLock { $0.finalMid = published.mid }
                while ContinuousClock.now < deadline, !acknowledgements.withLock({ $0.finalAcknowledged }) {
                    do { try handle.loop(timeoutMs: 50) } catch { break }
                }
            }
        }
        connection.withLock {
            // v5: if the final message was not acknowledged, 0x04 "disconnect with will message"
            // has the broker publish the will instead, so the offline state still gets out.
            let acknowledged = acknowledgements.withLock { $0.finalAcknowledged }
            handle.disconnect(reasonCode: acknowledged || $0.finalMessage == nil ? 0 : 4)
        }
        for _ in 0..<5 where (try? handle.loop(timeoutMs: 20)) != nil {}
        eventSink.yield(.disconnected(reason: "stopped"))
    }

    /// Drops the libmosquitto session after a failure; the next connect starts a new one.
    private func endSession(reason: String) {
        let tried = broker
        let wasConnected = connection.withLock {
            let was = $0.state == .connected
            $0.state = .disconnected(reason: reason)
            // Never up on this broker: the next one of the cluster (if any) is tried next.
            if !was { $0.brokerIndex = ($0.brokerIndex + 1) % options.brokers.count }
            acknowledgements.withLock { $0.sessionNumber += 1 }
            return was
        }
        if wasConnected {
            logger.warning("MQTT connection lost", metadata: ["reason": "\(reason)"])
        } else {
            logger.warning("MQTT connect failed", metadata: ["reason": "\(reason)", "broker": "\(tried)"])
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
            connection.withLock { $0.lastRefusal = reason }
            return
        }
        let session = connection.withLock {
            $0.state = .connected
            for filter in $0.subscriptions { handle.subscribe(filter) }
            return acknowledgements.withLock { $0.sessionNumber }
        }
        logger.info("MQTT connected", metadata: ["broker": "\(broker)", "client_id": "\(options.clientID)"])
        eventSink.yield(.connected(session: session, receiveMaximum: receiveMaximum))
    }

    func didDisconnect(returnCode: Int32) {
        guard returnCode != 0 else { return }
        logger.debug("MQTT disconnect callback", metadata: ["rc": "\(returnCode)"])
    }

    func didPublish(mid: Int32, reasonCode: Int32) {
        let session = acknowledgements.withLock {
            if mid == $0.finalMid { $0.finalAcknowledged = true }
            return $0.sessionNumber
        }
        eventSink.yield(.published(session: session, mid: mid, reasonCode: reasonCode))
    }

    func didReceive(_ message: MQTTIncomingMessage) {
        let handlers = networkThreadHandlers.withLock {
            $0.filter { TopicRules.matches(filter: $0.filter, topic: message.topic) }
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
