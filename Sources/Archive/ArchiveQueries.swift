import Agent
import Bus
import Foundation
import Logging

/// The archive's per-date side: asks a device for a finished day's reply when its final
/// aggregate arrives, keeps that reply, and gives it back to anyone asking the archive for that
/// device and day — byte for byte the device's own reply, so a switched-off Pi's days can still
/// be asked for. Runs on the MQTT network thread (see `ArchiveService`).
final class ArchiveQueries: Sendable {
    private let config: AgentConfig
    private let client: MQTTClient
    private let writer: ArchiveWriter
    private let replies: ReplyPublisher
    private let routing: ReplyRouting
    private let lock: ArchiveAnswerLock
    private let logger: Logger

    init(config: AgentConfig, client: MQTTClient, writer: ArchiveWriter, lock: ArchiveAnswerLock, logger: Logger) {
        self.config = config
        self.client = client
        self.writer = writer
        self.lock = lock
        replies = ReplyPublisher(client: client, kind: "archive query", logger: logger)
        var archiveConfig = config
        archiveConfig.device.id = ArchiveNames.account
        routing = ReplyRouting(config: archiveConfig)
        self.logger = logger
    }

    func requestDay(of message: ArchivedMessage) {
        guard let day = message.day else { return }
        requestDay(device: message.device, day: day, seq: message.seq)
    }

    /// Asks `device` for `day` (the default reply: health and location); the correlation data
    /// carries the aggregate's seq, so an older answer never replaces a newer one.
    func requestDay(device: String, day: String, seq: Int64) {
        guard ArchiveDatabase.validDate(day) != nil else { return }
        let request = MQTTMessage(
            topic: "\(config.mqtt.prefix)/\(device)/selection/date", payload: Array(day.utf8), qos: .atLeastOnce,
            properties: MQTTProperties(
                contentType: "text/plain", payloadIsUTF8: true,
                responseTopic: ArchiveNames.replyTopic(device: device, clientID: config.mqtt.clientID),
                correlationData: Array("\(seq) \(day)".utf8), messageExpiryS: 86_400))
        do {
            _ = try client.publish(request)
            writer.count { $0.daysRequested += 1 }
        } catch {
            logger.debug("cannot ask a device for a day now; asked again later", metadata: ["device": "\(device)", "day": "\(day)"])
        }
    }

    /// A device's reply to `requestDay`: kept if it is an ok reply for the day asked.
    func keepDay(_ message: MQTTIncomingMessage) {
        let levels = message.topic.split(separator: "/").map(String.init)
        let asked = message.properties.correlationData.map { String(decoding: $0, as: UTF8.self) }?.split(separator: " ")
        guard levels.count >= 2, let asked, asked.count == 2, let seq = Int64(asked[0]),
            let body = String(validating: message.payload, as: UTF8.self),
            let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
            object["ok"] as? Bool == true, object["date"] as? String == String(asked[1])
        else {
            writer.count { $0.dayRepliesRefused += 1 }
            logger.warning("a day reply that is not an ok reply for the day asked; not kept", metadata: ["topic": "\(message.topic)"])
            return
        }
        do {
            try writer.withDatabase {
                try ArchiveDatabase.storeDay(device: levels[1], day: String(asked[1]), body: body, sourceSeq: seq, into: $0)
            }
            writer.count { $0.daysStored += 1 }
        } catch {
            writer.count { $0.dayRepliesRefused += 1 }
            logger.warning("PostgreSQL refused a day reply", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
        }
    }

    /// `<prefix>/archive/<device>/selection/date`: the device's own reply for a kept day; the
    /// same request checks and error replies as the agent's (`QueryRequest`, `ReplyRouting`).
    /// Only the archiver holding the answering lock replies, error replies included: every
    /// archiver receives every request, and the contract is one reply per request.
    func answer(_ message: MQTTIncomingMessage) {
        guard answering() else { return writer.count { $0.queriesLeft += 1 } }
        let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let incoming = IncomingQuery(message, routing: routing)
        let (parsed, route, correlation, qos) = (incoming.parsed, incoming.route, incoming.correlation, incoming.qos)
        // The agent's order: size (413), then the reply topic (403), then the request.
        if case .failure(let error) = parsed, error.code == .tooLarge {
            return replies.send(error.reply, to: route.topic, correlationData: correlation, qos: qos)
        }
        if let refusal = route.refusal { return replies.send(refusal.reply, to: route.topic, correlationData: correlation, qos: qos) }
        let reply: QueryReply
        switch parsed {
        case .failure(let error):
            reply = error.reply
        case .success(let request):
            reply = answer(request, device: levels.count == 5 ? levels[2] : "")
        }
        replies.send(reply, to: route.topic, correlationData: correlation, qos: qos)
    }

    /// Whether this archiver holds the answering lock, checked in PostgreSQL itself.
    private func answering() -> Bool {
        guard let pid = lock.holderPID else { return false }
        do {
            return try writer.withDatabase { try ArchiveDatabase.answerHeld(by: pid, from: $0) }
        } catch {
            logger.warning("cannot check the answering lock; not answering", metadata: ["error": "\(error)"])
            return false
        }
    }

    private func answer(_ request: QueryRequest, device: String) -> QueryReply {
        guard request.include == [.health, .location], request.format == .json else {
            return QueryError(
                code: .badRequest,
                message: "the archive keeps each day's default reply (health and location, JSON); ask the device for more").reply
        }
        guard ArchiveDatabase.validDate(request.date) != nil else {
            return QueryError(code: .invalidDate, message: "\"\(request.date.prefix(40))\" is not a date (YYYY-MM-DD)").reply
        }
        do {
            guard let body = try writer.withDatabase({ try ArchiveDatabase.day(device: device, day: request.date, from: $0) }) else {
                writer.count { $0.queriesNotFound += 1 }
                return QueryError(code: .notFound, message: "no archived day \(request.date) for device \"\(device.prefix(64))\"").reply
            }
            writer.count { $0.queriesAnswered += 1 }
            return QueryReply(body: Array(body.utf8), contentType: QueryReply.json, status: 200)
        } catch {
            return QueryError(code: .internal, message: "cannot read the archive: \(error)").reply
        }
    }
}
