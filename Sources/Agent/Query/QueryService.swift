import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store
import Synchronization

/// Answers `<root>/selection/date` (and `[query] extra_topics`) with exactly one reply per
/// request, and `<root>/selection/seq` (resend requests, `PublishedResender`) with the same
/// checks, rate limit and queue.
///
/// Requests arrive on the MQTT network thread. Cheap checks (size, reply topic, rate) run there
/// and refusals go out at once. So does the common request — a finished day's health and
/// location as JSON — which the store answers from one row (the day's final aggregate, which
/// keeps the day's first and last fix): tens of microseconds, bounded by the rate limit, and
/// the reply leaves in the same turn of the loop. Everything that scans a day's rows (tracks,
/// heart-rate minutes, GPX, counting today's fixes, a day to rebuild) goes to one serial queue
/// (at most `maximumQueued` waiting) with its own read-only connection: a flood of queries
/// blocks neither the MQTT network thread, nor Swift's task threads, nor the sample writer.
final class QueryService: Service, Sendable, CustomStringConvertible {
    let filters: [String]
    private let resendTopic: String
    private let resender: PublishedResender
    private let replies: ReplyPublisher
    private let routing: ReplyRouting
    private let logger: Logger
    private let engineQueue = DispatchQueue(label: "keepalive.query")
    /// Used on `engineQueue`.
    private let engine: Mutex<QueryEngine>
    /// Its own connection, used only on the MQTT network thread.
    private let quickEngine: Mutex<QueryEngine>
    private let bucket: LockedTokenBucket
    private let waiting = LockedCounter()
    private let clock: AgentClock

    /// Requests waiting for the store; more are refused as rate-limited.
    static let maximumQueued = 32

    /// Folds the store's ingest journal, so a query reads every committed row; nil where the
    /// queries read a file no agent writes.
    private let foldJournal: (@Sendable () async -> Void)?

    init(
        config: AgentConfig, client: MQTTClient, settings: AggregateSettings, clock: AgentClock,
        foldJournal: (@Sendable () async -> Void)? = nil,
        keepSleepEpochs: (@Sendable ([StoredSleepEpoch]) async throws -> Void)? = nil,
        keepSleepNight: (@Sendable (StoredSleepNight) async throws -> Void)? = nil,
        keepDayFold: (@Sendable (StoredDayFold) async throws -> Void)? = nil, logger: Logger
    ) {
        self.clock = clock
        self.foldJournal = foldJournal
        let root = config.topicRoot
        resendTopic = "\(root)/selection/seq"
        filters = ["\(root)/selection/date", resendTopic] + config.query.extraTopics
        resender = PublishedResender(storePath: config.store.path, maxReplyBytes: config.query.maxReplyBytes)
        replies = ReplyPublisher(client: client, kind: "query", logger: logger)
        routing = ReplyRouting(config: config)
        self.logger = logger
        let engine = Self.makeEngine(config: config, settings: settings)
        // Sleep epochs, nights and day folds a query computed are kept by the writer, off the query's path.
        engine.keeping.epochs = keepSleepEpochs.map { save in
            Self.offThePath(save, logger: logger, failure: "could not keep sleep epochs") { ["count": "\($0.count)"] }
        }
        engine.keeping.night = keepSleepNight.map { save in
            Self.offThePath(save, logger: logger, failure: "could not keep a sleep night") { ["date": "\($0.date)"] }
        }
        engine.keeping.dayFold = keepDayFold.map { save in
            Self.offThePath(save, logger: logger, failure: "could not keep a day's folds") { ["date": "\($0.date)"] }
        }
        self.engine = Mutex(engine)
        quickEngine = Mutex(Self.makeEngine(config: config, settings: settings))
        bucket = LockedTokenBucket(TokenBucket(ratePerS: config.query.ratePerS, burst: config.query.burst))
    }

    /// `save` run in a task of its own; a failure is logged as the warning `failure` with `metadata`.
    private static func offThePath<Value: Sendable>(
        _ save: @escaping @Sendable (Value) async throws -> Void, logger: Logger, failure: String,
        metadata: @escaping @Sendable (Value) -> Logger.Metadata
    ) -> (Value) -> Void {
        { value in
            Task {
                do { try await save(value) } catch {
                    logger.warning("\(failure)", metadata: metadata(value).merging(["error": "\(error)"]) { $1 })
                }
            }
        }
    }

    private static func makeEngine(config: AgentConfig, settings: AggregateSettings) -> QueryEngine {
        QueryEngine(storePath: config.store.path, settings: settings, maxReplyBytes: config.query.maxReplyBytes, deviceID: config.device.id)
    }

    var description: String { "QueryService" }

    /// Called on the MQTT network thread: never scans the store there.
    func receive(_ message: MQTTIncomingMessage) {
        if message.topic == resendTopic { return receiveResend(message) }
        let incoming = IncomingQuery(message, routing: routing)
        let (parsed, route, correlation, qos) = (incoming.parsed, incoming.route, incoming.correlation, incoming.qos)
        guard admit(parsed.failure, route: route, correlation: correlation, qos: qos) else { return }
        switch parsed {
        case .failure(let error):
            send(error.reply, to: route.topic, correlationData: correlation, qos: qos)
        case .success(let request):
            if let reply = quickEngine.withLock({ $0.quickAnswer(request, now: clock.now()) }) {
                return send(reply, to: route.topic, correlationData: correlation, qos: qos)
            }
            onEngineQueue(route: route, correlation: correlation, qos: qos) { [self] in
                waitForFold()
                return engine.withLock { $0.answer(request, now: clock.now()) }
            }
        }
    }

    /// Size (413), then the reply topic (403), then the rate (429): refusals take no token.
    /// False when the request was refused (its reply sent).
    private func admit(_ parseError: QueryError?, route: ReplyRouting.Route, correlation: [UInt8]?, qos: MQTTQoS) -> Bool {
        if let parseError, parseError.code == .tooLarge {
            send(parseError.reply, to: route.topic, correlationData: correlation, qos: qos)
            return false
        }
        if let refusal = route.refusal {
            send(refusal.reply, to: route.topic, correlationData: correlation, qos: qos)
            return false
        }
        guard bucket.take() else {
            send(
                QueryError(code: .rateLimited, message: "more than the allowed rate of requests; try again shortly").reply,
                to: route.topic, correlationData: correlation, qos: qos)
            return false
        }
        return true
    }

    /// `<root>/selection/seq`: the kept messages are read on the engine queue, like a day's rows.
    private func receiveResend(_ message: MQTTIncomingMessage) {
        let parsed = ResendRequest.parse(message.payload)
        let replyTo = (try? parsed.get())?.replyTo ?? QueryRequest.replyTo(in: message.payload)
        let route = routing.route(responseTopic: message.properties.responseTopic, replyTo: replyTo)
        let (correlation, qos) = (message.properties.correlationData, ReplyRouting.replyQoS(forRequestQoS: message.qos))
        guard admit(parsed.failure, route: route, correlation: correlation, qos: qos) else { return }
        switch parsed {
        case .failure(let error):
            send(error.reply, to: route.topic, correlationData: correlation, qos: qos)
        case .success(let request):
            onEngineQueue(route: route, correlation: correlation, qos: qos) { [resender] in resender.answer(request) }
        }
    }

    /// Answers on the engine queue, at most `maximumQueued` waiting; beyond that refused (429),
    /// the token given back.
    private func onEngineQueue(
        route: ReplyRouting.Route, correlation: [UInt8]?, qos: MQTTQoS, answer: @escaping @Sendable () -> QueryReply
    ) {
        guard waiting.increment(below: Self.maximumQueued) else {
            bucket.giveBack()
            return send(
                QueryError(code: .rateLimited, message: "too many requests waiting; try again shortly").reply,
                to: route.topic, correlationData: correlation, qos: qos)
        }
        let accepted = ContinuousClock.now
        engineQueue.async { [self] in
            let started = ContinuousClock.now
            send(answer(), to: route.topic, correlationData: correlation, qos: qos)
            waiting.decrement()
            logger.debug("request answered", metadata: [
                "queued_ms": "\(Self.ms(started - accepted))", "answer_ms": "\(Self.ms(ContinuousClock.now - started))",
            ])
        }
    }

    /// Between queries the engine follows the store (`QueryEngine.follow`): every
    /// `followInterval`, and every `followSoon` while rows stream in (a strap's backlog).
    static let followInterval = Duration.milliseconds(500)
    static let followSoon = Duration.milliseconds(200)

    func run() async throws {
        // The first look at once: rows stored from then on are the ones followed (a backlog
        // arriving with the agent's start among them).
        var interval = Duration.zero
        while await sleepUnlessShuttingDown(for: interval) {
            interval = await follow() ? Self.followSoon : Self.followInterval
        }
        // Requests already accepted are answered while the connection is still up.
        engineQueue.sync {}
    }

    /// On the engine queue, between the queries waiting there.
    private func follow() async -> Bool {
        await withCheckedContinuation { continuation in
            engineQueue.async { [self] in
                let started = ContinuousClock.now
                // A query waiting is answered before a landing night's epochs are computed.
                let found = engine.withLock { $0.follow(now: clock.now(), yieldTo: { self.waiting.count > 0 }) }
                if found { logger.debug("followed new rows", metadata: ["ms": "\(Self.ms(ContinuousClock.now - started))"]) }
                continuation.resume(returning: found)
            }
        }
    }

    private static func ms(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// On the engine queue (its own thread, not Swift's task pool): the rows the writer still
    /// holds in its journal go to the tables first — a few milliseconds when there are any.
    /// A store that does not answer within 5 s (wedged) leaves the query to the tables as they are.
    private func waitForFold() {
        guard let foldJournal else { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            await foldJournal()
            done.signal()
        }
        if done.wait(timeout: .now() + 5) == .timedOut {
            logger.warning("the store did not fold its journal for a query in 5 s; answering from the tables")
        }
    }

    private func send(_ reply: QueryReply, to topic: String, correlationData: [UInt8]?, qos: MQTTQoS) {
        replies.send(reply, to: topic, correlationData: correlationData, qos: qos)
    }
}

/// Requests waiting for the engine queue.
private final class LockedCounter: Sendable {
    private let value = Mutex(0)

    /// Counts one more unless `limit` are already counted.
    func increment(below limit: Int) -> Bool {
        value.withLock { value in
            guard value < limit else { return false }
            value += 1
            return true
        }
    }

    func decrement() { value.withLock { $0 -= 1 } }

    var count: Int { value.withLock { $0 } }
}

extension Result {
    /// The error of a failure, nil for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
