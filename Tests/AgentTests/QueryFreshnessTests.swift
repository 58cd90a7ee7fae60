import Foundation
import Logging
import Synchronization
import Testing
import TestKit

@testable import Bus
@testable import Store

/// Read-your-writes for per-date queries: while a bridge backlog for a finished day and a GPS
/// track of that day stream in, and today's samples arrive live, every reply reports exactly the
/// rows committed before the request was sent (and no more than those committed once the reply
/// is back). A stock mosquitto, a real gpsd (gpsfake), a real bridge child process.
///
/// The scenario runs once; each test states one claim on what it recorded. The agent, gpsfake,
/// the requester and the broker are stopped before its outcome is handed out.
@Suite("Query freshness", .serialized)
struct QueryFreshnessTests {
    /// One request: the figures stored before it was sent and after its reply came, and the reply's.
    struct Round: Sendable {
        let context: String
        let before: StoredCounts.Figures
        let after: StoredCounts.Figures
        let answered: Answered
        let qos: Int
        let replyQoS: Int
    }

    struct Outcome: Sendable {
        let rounds: [Round]
        let roundsWhileStreaming: Int
        /// The past day's reply once the backlog and the track are in.
        let previous: StoredCounts.Figures
        let gpsLog: String
        let final: Answered
        let settled: Result<MQTTSubscriber.Message, any Error>
        let published: Int
        let streamedS: Double
        let interval: Double
        let fromAggregate: Answered
        let aggregateStale: Bool?
        let exitStatus: Int32?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        // A zone where it is about noon now, so 20 hours ago is yesterday afternoon there.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let eastOfUTC = 12 - utc.component(.hour, from: Date())
        let zoneName = eastOfUTC == 0 ? "Etc/GMT" : "Etc/GMT\(eastOfUTC > 0 ? "-" : "+")\(abs(eastOfUTC))"
        let zone = try #require(TimeZone(identifier: zoneName))
        let backlogStart = Date().addingTimeInterval(-20 * 3600)
        let pastDay = LocalDay(containing: backlogStart, timeZone: zone)
        let today = LocalDay(containing: Date(), timeZone: zone)
        try #require(pastDay == today.previous)

        // 6000 notifications at 2 Hz (every tenth without skin contact: stored, not valid), then
        // today's live ones, from a bridge child writing NDJSON. The test releases the backlog a
        // chunk at a time (a control file holds how many lines the bridge may send), so queries
        // are asked while it streams in on any machine, however loaded — not by a race.
        let directory = try TemporaryDirectory("freshness")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let backlog = (0..<6000).map { index in
            let stamp = formatter.string(from: backlogStart.addingTimeInterval(Double(index) / 2))
            let raw = index % 10 == 9 ? "0448" : String(format: "06%02x", 60 + index % 50)
            return #"{"ts":"\#(stamp)","sensor":"backlog","raw":"\#(raw)"}"#
        }
        let backlogFile = try directory.write("backlog.ndjson", backlog.joined(separator: "\n") + "\n")
        let release = try directory.write("release", "0")
        let bridge = try directory.write("bridge.py", """
            import datetime, json, sys, time
            lines = open(sys.argv[1]).read().splitlines()
            sent, last_live = 0, 0.0
            while True:
                try:
                    allowed = min(len(lines), int(open(sys.argv[2]).read() or 0))
                except ValueError:
                    allowed = sent
                if sent < allowed:
                    upto = min(sent + 20, allowed)
                    sys.stdout.write("\\n".join(lines[sent:upto]) + "\\n")
                    sent = upto
                now = time.time()
                if now - last_live >= 0.2:
                    stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                    sys.stdout.write(json.dumps({"ts": stamp, "sensor": "live", "raw": "0648"}) + "\\n")
                    last_live = now
                sys.stdout.flush()
                time.sleep(0.1)
            """)
        // A walk of that afternoon, as a receiver reports it (gpsd dates fixes by the sentences).
        let track = try directory.write("walk.nmea", NMEALog.text(NMEALog.walk(start: backlogStart, seconds: 600)))

        let broker = try MosquittoBroker()  // stock settings: Nagle on, 1000 queued messages
        defer { broker.stop() }
        let dailies = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/daily/\(pastDay)")
        let reacquires = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/gps_reacquire")
        // Played once; gpsd then stays up without data, so the agent reports a reacquisition
        // after fix_timeout_s — an event committed after every fix before it (see below).
        let gps = try await GPSFake(capture: track, cycle: 0.02, once: true, linger: 60)
        defer { gps.stop() }
        let interval = 3.0
        let agent = try AgentProcess(
            brokerPort: broker.port, timeZone: zoneName, gpsPort: gps.port, gpsFixTimeout: 2,
            extraConfig: """
                [hr]
                transport = "command"
                command = ["\(Tools.find("python3"))", "\(bridge)", "\(backlogFile)", "\(release)"]
                [schedule]
                today_interval_s = \(Int(interval))
                daily_grace_s = 0
                [query]
                rate_per_s = 1000
                burst = 1000
                """,
            // The product's fold: today's live rows wait in the ingest journal, and every query
            // must fold them first to answer with what was committed before it.
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"], foldS: 60)
        defer { agent.stop() }

        let requester = Requester(port: broker.port)
        defer { requester.stop() }
        // Each query is asked once: after the agent's subscription and the requester's are in.
        try await broker.waitForSubscription(to: "keepalive/testpi/selection/date")
        try await broker.waitForSubscription(to: Requester.replyTopic)

        let stored = StoredCounts(path: agent.storePath)
        var rounds = 0
        var recorded: [Round] = []
        var roundsWhileStreaming = 0
        /// One request: the reply reports at least what was committed before it was sent and at
        /// most what was committed once it came back.
        func ask(_ day: LocalDay) async throws -> Answered {
            let qos: MQTTQoS = rounds % 4 < 2 ? .atMostOnce : .atLeastOnce
            let before = try stored.figures(day)
            let reply = try await requester.ask("keepalive/testpi/selection/date", date: "\(day)", qos: qos, round: rounds)
            let after = try stored.figures(day)
            let answered = try QueryFreshnessTests.figures(in: reply)
            let context = "round \(rounds), \(day), QoS \(qos.rawValue): stored \(before) before the request, \(after) after the reply; replied \(answered)"
            recorded.append(Round(context: context, before: before, after: after, answered: answered, qos: Int(qos.rawValue), replyQoS: reply.qos))
            rounds += 1
            return answered
        }
        // Ten chunks of 600 lines (540 valid): after each, ask (past day and today) until the past
        // day's reply holds the chunk — every reply on the way checked as above.
        let chunk = 600, validPerChunk = 540
        for released in 1...(backlog.count / chunk) {
            try (String(released * chunk)).write(toFile: release, atomically: true, encoding: .utf8)
            var answered = try await ask(pastDay)
            _ = try await ask(today)
            try await Wait.until(timeout: 60, "chunk \(released) of the backlog in a reply (last: \(answered))") {
                answered.health.validHeartRates >= released * validPerChunk
            } refresh: {
                answered = try await ask(pastDay)
            }
            if answered.health.validHeartRates < backlog.count / 10 * 9 { roundsWhileStreaming += 1 }
        }
        // The track is complete once a fix near its last point is stored and the agent then
        // published event/gps_reacquire: events go through the sample writer, which commits every
        // fix it was handed before them.
        let lastPointMs = backlogStart.unixMs + 599_000
        var lastFix: (timeMs: Int64, receivedMs: Int64)?
        try await Wait.until(timeout: 90, "the end of the walk stored (last: \(String(describing: lastFix)))") {
            lastFix = try stored.lastFix(pastDay)
            return (lastFix?.timeMs ?? 0) >= lastPointMs - 3000
        } refresh: {
            _ = try await ask(pastDay)
            try await Task.sleep(for: .milliseconds(200))
        }
        let endReceivedMs = lastFix?.receivedMs ?? 0
        try await reacquires.waitFor(timeout: 30, "event/gps_reacquire after the walk's last fix") { message in
            guard let ts = (message.json?["ts"] as? String).flatMap(QueryFreshnessTests.parseTimestamp) else { return false }
            return ts.timeIntervalSince1970 * 1000 > Double(endReceivedMs)
        }
        let previous = try QueryFreshnessTests.figures(in: try await requester.ask(
            "keepalive/testpi/selection/date", date: "\(pastDay)", qos: .atMostOnce, round: rounds)).health
        rounds += 1
        let gpsLog = agent.log.split(separator: "\n").filter { $0.contains("gps") }.suffix(20).joined(separator: "\n")

        // Once everything is in, the reply is exactly the day: from the rows or, once
        // republished, from its stored aggregate.
        let final = try QueryFreshnessTests.figures(in: try await requester.ask(
            "keepalive/testpi/selection/date", date: "\(pastDay)", qos: .atLeastOnce, round: rounds))

        // health/daily/<date> is republished at most once per today_interval_s while the backlog
        // streams in, and settles on the whole day.
        let settled = await captured {
            try await dailies.waitFor(timeout: interval + 15, "health/daily with the whole backlog") {
                (($0.json?["heart_rate"] as? [String: Any])?["valid_samples"] as? Int) == previous.validHeartRates
                    && (($0.json?["location"] as? [String: Any])?["fixes"] as? Int) == previous.fixes
            }
        }
        // Measured on the agent's own stamps: the span over which it received the day's rows.
        let published = dailies.messages.filter { !$0.retained }
        let streamed = try stored.receivedSpanS(pastDay) + interval

        // And the stored aggregate now covers the day: the reply comes from it, unchanged.
        let fromAggregate = try QueryFreshnessTests.figures(in: try await requester.ask(
            "keepalive/testpi/selection/date", date: "\(pastDay)", qos: .atMostOnce, round: rounds + 1))
        let stale = try StoreReader(path: agent.storePath).read { try $0.dayAggregate(date: pastDay.description) }?.isStale
        return Outcome(
            rounds: recorded, roundsWhileStreaming: roundsWhileStreaming, previous: previous, gpsLog: gpsLog, final: final,
            settled: settled, published: published.count, streamedS: streamed, interval: interval, fromAggregate: fromAggregate,
            aggregateStale: stale, exitStatus: agent.stop())
    }

    @Test("a backlog for a past day streams in: every query reports exactly what was committed before it, health and location, past day and today")
    func readYourWrites() async throws {
        let outcome = try await Self.outcome.value
        for round in outcome.rounds {
            let (before, after, answered, context) = (round.before, round.after, round.answered, round.context)
            #expect(before.validHeartRates <= answered.health.validHeartRates && answered.health.validHeartRates <= after.validHeartRates, "\(context)")
            #expect(before.fixes <= answered.health.fixes && answered.health.fixes <= after.fixes, "\(context)")
            #expect(answered.locationFixes == answered.health.fixes, "\(context)")
        }
        let previous = outcome.previous
        #expect(previous.validHeartRates == 5400, "every valid notification of the backlog stored")
        #expect(previous.fixes > 300, "the track's fixes stored (gpsd skips its first couple of seconds): \(outcome.gpsLog)")
        #expect(outcome.roundsWhileStreaming >= 9, "queries answered while the backlog streamed in: \(outcome.roundsWhileStreaming)")
        #expect(outcome.final.health.validHeartRates == previous.validHeartRates && outcome.final.health.fixes == previous.fixes)
    }

    @Test("every reply to a query carries the request's QoS")
    func replyQoS() async throws {
        for round in try await Self.outcome.value.rounds {
            // The reply carries the request's QoS (our subscription is QoS 1, so it is not capped).
            #expect(round.replyQoS == round.qos, "\(round.context): reply QoS \(round.replyQoS)")
        }
    }

    @Test("health/daily stays throttled while a backlog streams in, and settles final on the whole day")
    func dailyThrottled() async throws {
        let outcome = try await Self.outcome.value
        let settled = try outcome.settled.get()
        #expect(outcome.published <= Int(outcome.streamedS / outcome.interval) + 2,
                "\(outcome.published) health/daily while the day's rows arrived over \(outcome.streamedS) s")
        #expect(settled.json?["final"] as? Bool == true)
    }

    @Test("once the day's aggregate covers it, the reply comes from the aggregate, unchanged")
    func replyFromAggregate() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.fromAggregate == outcome.final)
        #expect(outcome.aggregateStale == false)
    }

    @Test("the agent stops cleanly (exit 0) after a streamed backlog")
    func cleanStop() async throws {
        #expect(try await Self.outcome.value.exitStatus == 0)
    }

    struct Answered: Equatable, Sendable, CustomStringConvertible {
        var health: StoredCounts.Figures
        var locationFixes: Int
        var description: String { "health \(health), location.fixes \(locationFixes)" }
    }

    static func parseTimestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    static func figures(in reply: MQTTIncomingMessage) throws -> Answered {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any])
        #expect(object["ok"] as? Bool == true, "\(String(decoding: reply.payload, as: UTF8.self))")
        let health = object["health"] as? [String: Any]
        return Answered(
            health: StoredCounts.Figures(
                validHeartRates: (health?["heart_rate"] as? [String: Any])?["valid_samples"] as? Int ?? -1,
                fixes: (health?["location"] as? [String: Any])?["fixes"] as? Int ?? -1),
            locationFixes: (object["location"] as? [String: Any])?["fixes"] as? Int ?? -1)
    }
}

/// What the store holds for a day, read as the agent's queries would: a read-only connection.
struct StoredCounts {
    struct Figures: Equatable, Sendable, CustomStringConvertible {
        var validHeartRates: Int
        var fixes: Int
        var description: String { "\(validHeartRates) valid heart rates, \(fixes) fixes" }
    }

    let path: String

    func figures(_ day: LocalDay) throws -> Figures {
        let db = try SQLiteConnection(path: path, readOnly: true)
        let bounds = day.boundsMs
        func count(_ sql: StaticString) throws -> Int {
            let statement = try db.statement(sql).bind(.integer(bounds.start), .integer(bounds.end))
            defer { statement.reset() }
            return try statement.step() ? statement.int(0) : 0
        }
        return Figures(
            validHeartRates: try count("SELECT count(*) FROM hr_sample WHERE ts_ms >= ? AND ts_ms < ? AND valid = 1"),
            fixes: try count("SELECT count(*) FROM fix WHERE ts_ms >= ? AND ts_ms < ?"))
    }

    /// The newest fix of the day: its time and when it arrived.
    func lastFix(_ day: LocalDay) throws -> (timeMs: Int64, receivedMs: Int64)? {
        let db = try SQLiteConnection(path: path, readOnly: true)
        let bounds = day.boundsMs
        let statement = try db.statement("SELECT ts_ms, received_ms FROM fix WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms DESC LIMIT 1")
            .bind(.integer(bounds.start), .integer(bounds.end))
        defer { statement.reset() }
        return try statement.step() ? (statement.int64(0), statement.int64(1)) : nil
    }

    /// Seconds between the first and the last arrival (the agent's `received_ms`) of the day's rows.
    func receivedSpanS(_ day: LocalDay) throws -> Double {
        let db = try SQLiteConnection(path: path, readOnly: true)
        let bounds = day.boundsMs
        let statement = try db.statement("""
            SELECT min(first), max(last) FROM (
              SELECT min(received_ms) AS first, max(received_ms) AS last FROM hr_sample WHERE ts_ms >= ?1 AND ts_ms < ?2
              UNION ALL SELECT min(received_ms), max(received_ms) FROM fix WHERE ts_ms >= ?1 AND ts_ms < ?2)
            """).bind(.integer(bounds.start), .integer(bounds.end))
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return Double(statement.int64(1) - statement.int64(0)) / 1000
    }
}

/// An MQTT v5 requester on its own connection: request/response with correlation data.
final class Requester: Sendable {
    private let client: MQTTClient
    private let replies = Mutex<[[UInt8]: MQTTIncomingMessage]>([:])
    static let replyTopic = "reply/freshness"

    init(port: Int) {
        client = MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: port, clientID: "freshness-requester"), logger: Logger(label: "test"))
        client.handleOnNetworkThread(Self.replyTopic) { [self] message in
            guard let correlation = message.properties.correlationData else { return }
            replies.withLock { $0[correlation] = message }
        }
        client.start()
    }

    func ask(_ topic: String, date: String, qos: MQTTQoS, round: Int, timeout: Double = 10) async throws -> MQTTIncomingMessage {
        let correlation = Array("r\(round)".utf8)
        try await Wait.until(timeout: 5, "the requester's connection") { client.connectionState == .connected }
        _ = try client.publish(MQTTMessage(
            topic: topic, payload: Array(date.utf8), qos: qos,
            properties: MQTTProperties(responseTopic: Self.replyTopic, correlationData: correlation)))
        var reply: MQTTIncomingMessage?
        try await Wait.until(timeout: timeout, "the reply to request \(round) (\(date))") {
            reply = replies.withLock { $0.removeValue(forKey: correlation) }
            return reply != nil
        }
        guard let reply else { throw WaitTimeout(description: "no reply to request \(round)") }
        return reply
    }

    func stop() { client.stop() }
}
