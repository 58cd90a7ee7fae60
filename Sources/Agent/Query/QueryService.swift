import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Answers `<root>/selection/date` (and `[query] extra_topics`) with exactly one reply per
/// request.
///
/// Cheap checks (size, rate, reply topic) run where the message arrives and refusals go out at
/// once; accepted requests queue (bounded) for one worker, which reads the store on its own
/// thread through its own read-only connection, so a flood of queries neither blocks the MQTT
/// event loop nor the sample writer.
final class QueryService: Service, Sendable, CustomStringConvertible {
    struct Job: Sendable {
        var request: QueryRequest
        var topic: String
        var correlationData: [UInt8]?
    }

    let filters: [String]
    private let client: MQTTClient
    private let routing: ReplyRouting
    private let settings: AggregateSettings
    private let todayHealth: @Sendable () async -> HealthDocument?
    private let logger: Logger
    private let engineQueue = DispatchQueue(label: "keepalive.query")
    private let engine: QueryEngineBox
    private let bucket: LockedTokenBucket
    private let jobs: AsyncStream<Job>
    private let queue: AsyncStream<Job>.Continuation

    /// Requests waiting for the worker; more are refused as rate-limited.
    static let maximumQueued = 32

    init(
        config: AgentConfig, client: MQTTClient, settings: AggregateSettings,
        todayHealth: @escaping @Sendable () async -> HealthDocument?, logger: Logger
    ) {
        let root = config.topicRoot
        filters = ["\(root)/selection/date"] + config.query.extraTopics
        self.client = client
        routing = ReplyRouting(
            fallbackTopic: "\(root)/selection/result", ownRoot: root,
            protectedTopics: config.mqtt.owntracksTopic.isEmpty ? [] : [config.mqtt.owntracksTopic])
        self.settings = settings
        self.todayHealth = todayHealth
        self.logger = logger
        engine = QueryEngineBox(QueryEngine(
            storePath: config.store.path, settings: settings, maxReplyBytes: config.query.maxReplyBytes, deviceID: config.device.id))
        bucket = LockedTokenBucket(TokenBucket(ratePerS: config.query.ratePerS, burst: config.query.burst))
        (jobs, queue) = AsyncStream.makeStream(of: Job.self, bufferingPolicy: .bufferingOldest(Self.maximumQueued))
    }

    var description: String { "QueryService" }

    /// Called from the bus event loop: never waits for the store.
    func receive(_ message: MQTTIncomingMessage) {
        let correlation = message.properties.correlationData
        let parsed = QueryRequest.parse(message.payload)
        let replyTo: String? =
            switch parsed {
            case .success(let request): request.replyTo
            case .failure: QueryRequest.replyTo(in: message.payload)
            }
        let route = routing.route(responseTopic: message.properties.responseTopic, replyTo: replyTo)
        if let refusal = route.refusal { return send(refusal.reply, to: route.topic, correlationData: correlation) }
        guard bucket.take() else {
            return send(
                QueryError(code: .rateLimited, message: "more than the allowed rate of requests; try again shortly").reply,
                to: route.topic, correlationData: correlation)
        }
        switch parsed {
        case .failure(let error):
            send(error.reply, to: route.topic, correlationData: correlation)
        case .success(let request):
            if case .dropped = queue.yield(Job(request: request, topic: route.topic, correlationData: correlation)) {
                send(
                    QueryError(code: .rateLimited, message: "too many requests waiting; try again shortly").reply,
                    to: route.topic, correlationData: correlation)
            }
        }
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            for await job in jobs {
                let now = Date()
                let today = LocalDay(containing: now, timeZone: settings.timeZone).description
                let health = job.request.date == today ? await todayHealth() : nil
                let reply = await answer(job.request, now: now, todayHealth: health)
                send(reply, to: job.topic, correlationData: job.correlationData)
            }
        } onGracefulShutdown: {
            self.queue.finish()
        }
    }

    private func answer(_ request: QueryRequest, now: Date, todayHealth: HealthDocument?) async -> QueryReply {
        await withCheckedContinuation { continuation in
            engineQueue.async {
                continuation.resume(returning: self.engine.engine.answer(request, now: now, todayHealth: todayHealth))
            }
        }
    }

    private func send(_ reply: QueryReply, to topic: String, correlationData: [UInt8]?) {
        let message = MQTTMessage(
            topic: topic, payload: reply.body, qos: .atLeastOnce, retain: false,
            properties: MQTTProperties(
                contentType: reply.contentType, payloadIsUTF8: true, correlationData: correlationData,
                userProperties: [("status", String(reply.status))], messageExpiryS: 300))
        do {
            _ = try client.publish(message)
        } catch {
            logger.notice("cannot send a query reply", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }
}

/// The engine is only ever used on `engineQueue`.
private final class QueryEngineBox: @unchecked Sendable {
    let engine: QueryEngine
    init(_ engine: QueryEngine) { self.engine = engine }
}

private final class LockedTokenBucket: @unchecked Sendable {
    private let lock = NSLock()
    private var bucket: TokenBucket
    init(_ bucket: TokenBucket) { self.bucket = bucket }
    func take() -> Bool { lock.withLock { bucket.take() } }
}
