import Agent
import Bus
import Foundation
import Logging
import Synchronization

/// Fills the archive's seq gaps from the devices' own stores (docs/fleet.md, "Gaps"): ejabberd
/// 23.01 drops what it already acknowledged for about a second after a node dies, and nothing on
/// the broker's side can get that back; the device still keeps what it published
/// (`[store] keep_published_h`). Every status period the first gaps of each device are asked
/// for on `<prefix>/<device>/selection/seq` (`{"from","to"}`, MQTT v5 request/response); the
/// messages that come back go through the same (device, seq) insert as live ones, so a seq
/// that arrives both ways is still one row; the seqs the device says it does not have are kept
/// as such (`archive_unfillable`) and not asked for again. Replies are handled on the MQTT
/// network thread, like every other message of the archive.
final class ArchiveGapFill: Sendable {
    private let config: AgentConfig
    private let client: MQTTClient
    private let writer: ArchiveWriter
    private let logger: Logger
    /// When each (device, first seq) was last asked for: not again before `retryAfter`.
    private let asked = Mutex<[String: ContinuousClock.Instant]>([:])
    private let retryAfter: Duration

    /// Gaps asked for per device and per status period, and in all.
    static let perDevice = 4
    static let perPeriod = 200

    init(config: AgentConfig, client: MQTTClient, writer: ArchiveWriter, logger: Logger) {
        self.config = config
        self.client = client
        self.writer = writer
        self.logger = logger
        retryAfter = .seconds(max(config.archive.statusIntervalS, 5))
    }

    /// Where devices answer this archiver's resend requests.
    var replyFilter: String { "reply/+/\(ArchiveNames.account)/\(config.mqtt.clientID)/seq" }

    /// Asks each device with gaps for its first few (the status loop's connection).
    func askForGaps(from connection: PostgresConnection) throws {
        let now = ContinuousClock.now
        let due = try ArchiveDatabase.gapRanges(perDevice: Self.perDevice, limit: Self.perPeriod, from: connection).filter { gap in
            asked.withLock { asked in
                asked = asked.filter { now - $0.value < retryAfter }
                return asked["\(gap.device) \(gap.seqs.lowerBound)"] == nil
            }
        }
        for gap in due { ask(device: gap.device, seqs: gap.seqs) }
    }

    /// Sends one resend request; the correlation data names the range asked for.
    func ask(device: String, seqs: ClosedRange<Int64>) {
        let request = MQTTMessage(
            topic: "\(config.mqtt.prefix)/\(device)/selection/seq",
            payload: JSONValue.object([("from", .int(seqs.lowerBound)), ("to", .int(seqs.upperBound))]).bytes, qos: .atLeastOnce,
            properties: MQTTProperties(
                contentType: QueryReply.json, payloadIsUTF8: true,
                responseTopic: ArchiveNames.replyTopic(device: device, clientID: config.mqtt.clientID) + "/seq",
                correlationData: Array("\(seqs.lowerBound) \(seqs.upperBound)".utf8), messageExpiryS: 300))
        do {
            _ = try client.publish(request)
            asked.withLock { $0["\(device) \(seqs.lowerBound)"] = .now }
            writer.count { $0.gapRequests += 1 }
        } catch {
            logger.debug("cannot ask a device for its gap now; asked again later", metadata: ["device": "\(device)"])
        }
    }

    /// A device's reply on `reply/<device>/archive/<client id>/seq`.
    func keep(_ message: MQTTIncomingMessage) {
        let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let asked = message.properties.correlationData.map { String(decoding: $0, as: UTF8.self) }?.split(separator: " ")
        guard levels.count == 5, let asked, asked.count == 2, let from = Int64(asked[0]), let to = Int64(asked[1]), from <= to,
            let reply = try? JSONDecoder().decode(ResendReply.self, from: Data(message.payload)), reply.ok
        else {
            return refuse(message.topic, "not an ok reply to a resend request of this archive: \(String(decoding: message.payload.prefix(200), as: UTF8.self))")
        }
        let device = levels[1]
        for sent in reply.messages ?? [] {
            // The topic rules let a device answer only as itself; its messages must be its own.
            guard (from...to).contains(sent.seq),
                case .success(let archived) = ArchivedMessage.parse(topic: sent.topic, payload: Array(sent.payload.utf8), prefix: config.mqtt.prefix),
                archived.device == device, archived.seq == sent.seq
            else {
                refuse(message.topic, "a resent message that is not \(device)'s seq \(sent.seq) as asked")
                continue
            }
            if writer.store(archived) == true { writer.count { $0.gapsFilled += 1 } }
        }
        for pair in reply.notKept ?? [] {
            guard pair.count == 2, from <= pair[0], pair[0] <= pair[1], pair[1] <= to else {
                refuse(message.topic, "a not_kept range outside the one asked for")
                continue
            }
            do {
                try writer.withDatabase { try ArchiveDatabase.storeUnfillable(device: device, seqs: pair[0]...pair[1], into: $0) }
                writer.count { $0.gapsUnfillable += pair[1] - pair[0] + 1 }
            } catch {
                logger.warning("PostgreSQL refused an unfillable range", metadata: ["device": "\(device)", "error": "\(error)"])
            }
        }
        // Cut for size: the rest at once.
        if let next = reply.next, next > from, next <= to { ask(device: device, seqs: next...to) }
    }

    private func refuse(_ topic: String, _ why: String) {
        writer.count { $0.gapRepliesRefused += 1 }
        logger.notice("resend reply refused", metadata: ["topic": "\(topic)", "why": "\(why)"])
    }

    /// The device's reply (`PublishedResender`).
    private struct ResendReply: Decodable {
        struct Message: Decodable {
            var seq: Int64
            var topic: String
            var payload: String
        }
        var ok: Bool
        var messages: [Message]?
        var notKept: [[Int64]]?
        var next: Int64?

        enum CodingKeys: String, CodingKey {
            case ok, messages, next
            case notKept = "not_kept"
        }
    }
}
