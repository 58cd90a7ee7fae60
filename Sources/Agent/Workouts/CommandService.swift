import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Takes `<root>/cmd/workout` and `<root>/cmd/gear` (docs/contract.md, "Commands") and answers
/// each with one reply, as queries are answered: to the v5 response topic (or `reply_to`) under
/// the same allow-list, else `<root>/cmd/result`, with the correlation data and a `status`.
/// Size, reply topic and rate are checked on the network thread; the work runs in a task.
final class CommandService: Service, Sendable, CustomStringConvertible {
    let filters: [String]
    private let workoutTopic: String
    private let replies: ReplyPublisher
    private let routing: ReplyRouting
    private let workouts: WorkoutService
    private let gear: GearBook
    private let store: Store
    private let bucket: LockedTokenBucket
    private let logger: Logger

    init(config: AgentConfig, client: MQTTClient, workouts: WorkoutService, gear: GearBook, store: Store, logger: Logger) {
        workoutTopic = "\(config.topicRoot)/cmd/workout"
        filters = [workoutTopic, "\(config.topicRoot)/cmd/gear"]
        replies = ReplyPublisher(client: client, kind: "command", logger: logger)
        routing = ReplyRouting(config: config, fallbackTopic: "\(config.topicRoot)/cmd/result")
        self.workouts = workouts
        self.gear = gear
        self.store = store
        bucket = LockedTokenBucket(TokenBucket(ratePerS: config.query.ratePerS, burst: config.query.burst))
        self.logger = logger
    }

    var description: String { "CommandService" }

    func run() async throws { try? await gracefulShutdown() }

    /// Called on the MQTT network thread.
    func receive(_ message: MQTTIncomingMessage) {
        let target: CommandRequest.Target = message.topic == workoutTopic ? .workout : .gear
        let parsed = CommandRequest.parse(message.payload, target: target)
        let replyTo: String? =
            switch parsed {
            case .success(let request): request.replyTo
            case .failure: QueryRequest.replyTo(in: message.payload)
            }
        let route = routing.route(responseTopic: message.properties.responseTopic, replyTo: replyTo)
        let reply = Reply(topic: route.topic, correlationData: message.properties.correlationData, qos: ReplyRouting.replyQoS(forRequestQoS: message.qos))
        if case .failure(let error) = parsed, error.code == .tooLarge { return send(error.reply, reply) }
        if let refusal = route.refusal { return send(refusal.reply, reply) }
        guard bucket.take() else {
            return send(QueryError(code: .rateLimited, message: "more than the allowed rate of requests; try again shortly").reply, reply)
        }
        switch parsed {
        case .failure(let error): send(error.reply, reply)
        case .success(let request):
            Task { [self] in send(await perform(request.operation), reply) }
        }
    }

    private func perform(_ operation: CommandRequest.Operation) async -> QueryReply {
        do {
            switch operation {
            case .startWorkout(let sport):
                return ok([("workout", .raw(try await workouts.startManual(sport: sport).record))])
            case .stopWorkout(let sport):
                let stopped = try await workouts.stopManual(sport: sport)
                return ok([("workout", .raw(stopped.publishedJSON()))])
            case .addGear(let id, let name, let startKm, let limitKm):
                return ok([("gear", .object(GearBook.json(try await gear.add(id: id, name: name, startKm: startKm, limitKm: limitKm))))])
            case .selectGear(let id):
                guard let found = try await store.readStored({ try $0.gear(id: id) }) else { throw GearError.unknown(id) }
                guard !found.retired else { return failure(.badRequest, "\(id) is retired") }
                return ok([("gear", .object(GearBook.json(try await gear.select(id: id))))])
            case .retireGear(let id):
                guard try await store.readStored({ try $0.gear(id: id) }) != nil else { throw GearError.unknown(id) }
                return ok([("gear", .object(GearBook.json(try await gear.retire(id: id))))])
            case .assign(let workoutID, let gearID):
                guard let workout = try await store.readStored({ try $0.workout(id: workoutID) }), workout.finished else {
                    return failure(.notFound, "no finished workout with id \(workoutID)")
                }
                if let gearID, try await store.readStored({ try $0.gear(id: gearID) }) == nil { throw GearError.unknown(gearID) }
                let credited = try await gear.assign(workout: workout, to: gearID)
                return ok([("workout", .string(workoutID)), ("gear", credited.map { .object(GearBook.json($0)) } ?? .null)])
            case .listGear:
                return ok([("gear", .array(try await gear.list().map { .object(GearBook.json($0)) }))])
            }
        } catch let error as WorkoutService.ManualError {
            return failure(.conflict, error.description)
        } catch let error as GearError {
            return failure(.notFound, error.description)
        } catch {
            logger.error("command failed", metadata: ["error": "\(error)"])
            return failure(.internal, "the store could not carry it out: \(error)")
        }
    }

    private func ok(_ members: [(String, JSONValue)]) -> QueryReply {
        QueryReply(body: JSONValue.object([("ok", true)] + members).bytes, contentType: QueryReply.json, status: 200)
    }

    private func failure(_ code: QueryError.Code, _ message: String) -> QueryReply {
        QueryError(code: code, message: message).reply
    }

    private struct Reply {
        var topic: String
        var correlationData: [UInt8]?
        var qos: MQTTQoS
    }

    private func send(_ reply: QueryReply, _ to: Reply) {
        replies.send(reply, to: to.topic, correlationData: to.correlationData, qos: to.qos)
    }
}
