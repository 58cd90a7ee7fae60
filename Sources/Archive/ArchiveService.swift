import Agent
import Bus
import Foundation
import Logging

/// `keepalive archive`: one MQTT session on the fleet's cluster and the PostgreSQL archive.
///
/// Everything runs on the MQTT network thread, in the order messages arrive: a device message
/// is committed before the next is read (`ArchiveWriter`); a new `health/daily/<date>` asks its
/// device for that day's reply, which is kept when it comes back; per-date queries to
/// `<prefix>/archive/<device>/selection/date` are answered from the kept replies
/// (`ArchiveQueries`), by the one archiver holding the answering lock (`ArchiveAnswerLock`). A timer publishes the counters and seq gaps, and asks the devices for
/// the messages missing in them (`ArchiveGapFill`).
final class ArchiveService: Sendable {
    let config: AgentConfig
    let client: MQTTClient
    let writer: ArchiveWriter
    let answerLock: ArchiveAnswerLock
    private let logger: Logger
    private let queries: ArchiveQueries
    private let gapFill: ArchiveGapFill
    private let statusTopic: String
    private let since: String

    init(config: AgentConfig, logger: Logger, now: Date) throws {
        self.config = config
        self.logger = logger
        statusTopic = "\(config.mqtt.prefix)/\(ArchiveNames.account)/status/\(config.mqtt.clientID)"
        let offline = MQTTMessage(
            topic: statusTopic, payload: JSONValue.object([("state", "offline")]).bytes, qos: .atLeastOnce, retain: true)
        var options = try MQTTOptionsFactory.options(for: config, will: offline)
        // A persistent session: what arrives while the archiver is away waits for it, and what it
        // had not acknowledged (not committed) comes again.
        options.sessionExpiryS = max(options.sessionExpiryS, 86_400)
        // The cluster's other nodes: an archiver whose node died reconnects to the next one.
        options.alternateBrokers = try config.archive.nodes.map(Self.node)
        client = MQTTClient(options: options, logger: logger)
        writer = ArchiveWriter(conninfo: config.archive.conninfo, logger: logger)
        answerLock = ArchiveAnswerLock(conninfo: config.archive.conninfo, clientID: config.mqtt.clientID, logger: logger)
        queries = ArchiveQueries(config: config, client: client, writer: writer, lock: answerLock, logger: logger)
        gapFill = ArchiveGapFill(config: config, client: client, writer: writer, logger: logger)
        let formatter = ISO8601DateFormatter()
        since = formatter.string(from: now)
    }

    /// `host:port` (the last colon splits, so a bracketless IPv6 address is refused by the port).
    static func node(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port),
            colon > text.startIndex
        else { throw ArchiveNodeError(node: text) }
        return (String(text[..<colon]), port)
    }

    func start() {
        let prefix = config.mqtt.prefix
        let clientID = config.mqtt.clientID
        writer.onNewDay = { [queries] message in queries.requestDay(of: message) }
        // Queries to the archive arrive through the data subscription, not one of their own: with
        // two overlapping subscriptions ejabberd delivers a copy per subscription, and each copy
        // would be answered.
        let queryFilter = "\(prefix)/\(ArchiveNames.account)/+/selection/date"
        client.handleOnNetworkThread("\(prefix)/+/#") { [writer, queries] message in
            writer.receive(topic: message.topic, payload: message.payload, prefix: prefix)
            if TopicRules.matches(filter: queryFilter, topic: message.topic) { queries.answer(message) }
        }
        client.handleOnNetworkThread("reply/+/\(ArchiveNames.account)/\(clientID)") { [queries] message in
            queries.keepDay(message)
        }
        client.handleOnNetworkThread(gapFill.replyFilter) { [gapFill] message in gapFill.keep(message) }
        client.start()
    }

    /// Every `interval`: days still to fetch are asked again, the gaps counted (on a connection
    /// of its own, so a slow count never holds up the archive), the status published.
    func publishStatusForever() async {
        var gaps: ArchiveGaps?
        var side: PostgresConnection?
        while !Task.isCancelled {
            do {
                if side == nil || side?.isOK == false {
                    let opened = try PostgresConnection(conninfo: config.archive.conninfo)
                    try ArchiveDatabase.prepare(opened)
                    side = opened
                }
                if let side {
                    // Next month's partition exists well before the month begins.
                    try ArchiveDatabase.createPartitions(side)
                    gaps = try ArchiveDatabase.gaps(from: side)
                    for day in try ArchiveDatabase.daysToFetch(limit: 200, from: side) {
                        queries.requestDay(device: day.device, day: day.day, seq: day.seq)
                    }
                    try gapFill.askForGaps(from: side)
                }
            } catch {
                side = nil
                logger.debug("archive status: PostgreSQL not reachable for the gap count", metadata: ["error": "\(error)"])
            }
            publishStatus(gaps: gaps, reachable: side != nil)
            try? await Task.sleep(for: .seconds(config.archive.statusIntervalS))
        }
    }

    func publishStatus(gaps: ArchiveGaps?, reachable: Bool) {
        var members: [(String, JSONValue)] = [("state", "online"), ("client_id", .string(config.mqtt.clientID)), ("since", .string(since))]
        if case .object(let counters) = writer.snapshot.json(gaps: gaps, reachable: reachable) { members += counters }
        let payload = JSONValue.object(members).bytes
        _ = try? client.publish(MQTTMessage(topic: statusTopic, payload: payload, qos: .atLeastOnce, retain: true))
        logger.info("archive status", metadata: ["status": "\(String(decoding: payload, as: UTF8.self))"])
    }

    /// A clean stop: the writer gives up any wait for PostgreSQL, the session ends offline.
    func stop() {
        writer.stop()
        client.stop(finalMessage: MQTTMessage(
            topic: statusTopic, payload: JSONValue.object([("state", "offline")]).bytes, qos: .atLeastOnce, retain: true))
    }
}

/// A `[archive] nodes` entry that is not `host:port`.
struct ArchiveNodeError: Error, CustomStringConvertible {
    let node: String
    var description: String { "[archive] nodes: \"\(node)\" is not host:port" }
}
