import Foundation
import Testing
import TestKit

@testable import Store

/// Steps through a real bridge transport into the store, the day aggregate and the query
/// (docs/steps.md). The fixtures' times are moved to two days ago, inside the agent's backlog window.
@Suite("Steps from the bridge")
struct StepsTests {
    /// The fixture's lines with their day moved to `day` (`YYYY-MM-DD`).
    static func moved(_ fixture: String, to day: String, in directory: TemporaryDirectory) throws -> String {
        let text = try String(contentsOfFile: Tools.fixture(fixture), encoding: .utf8)
        return try directory.write("moved.ndjson", text.replacingOccurrences(of: "\"ts\":\"2026-11-21T", with: "\"ts\":\"\(day)T"))
    }

    static func day(daysAgo: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(-Double(daysAgo) * 86_400))
    }

    /// A `command` bridge that records its pid, prints `path`, then stalls (and is restarted).
    static func bridge(catting path: String, pids: String) -> String {
        let script = "echo $$ >> \(pids); cat \(path); exec sleep 1000"
        return "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"\(script)\"]\nstall_timeout_s = 2\nreacquire_max_s = 2\n"
    }

    static func health(_ reply: [String: Any]?) -> [String: Any]? { reply?["health"] as? [String: Any] }

    /// 10 minutes of RSC at 170 steps/min through the command transport, the bridge replayed
    /// once by its restart, the day queried and exported: run once for the three claims on it.
    /// The agent and the broker are stopped before the outcome is handed out.
    struct FootPod: Sendable {
        let day: String
        let storedOnce: Result<Void, any Error>
        let replayRead: Result<Void, any Error>
        let storedAfterReplay: Int64
        /// The day's query reply with health and timeline, as JSON.
        let reply: Result<String, any Error>
        let exportStatus: Int32?
        let csv: Result<String, any Error>
    }

    static let footPod = Task { () async throws -> FootPod in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let directory = try TemporaryDirectory("steps-rsc")
        let day = Self.day(daysAgo: 2)
        let lines = try Self.moved("steps/rsc-170spm-10min.ndjson", to: day, in: directory)
        let pids = directory.file("pids")
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: Self.bridge(catting: lines, pids: pids), directory: directory,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        let starts = { (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").count ?? 0 }
        // The bridge is restarted after it stalls: the second start replays all 601 messages.
        try await Wait.until(timeout: 30, "the bridge to be started twice; log:\n\(agent.log.suffix(1500))") { starts() >= 2 }
        let stored = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM step_record WHERE kind = 'rsc'")) ?? 0 }
        let storedOnce = await captured { try await Wait.until(timeout: 10, "601 RSC notifications stored") { stored() == 601 } }
        let replayRead = await captured { try await Wait.until(timeout: 10, "the replay to be read (3 starts)") { starts() >= 3 } }
        let storedAfterReplay = stored()

        let reply = await captured {
            let object = try #require(try await agent.queryReply([day, "--include", "health", "timeline"]))
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        // The same buckets as CSV, for a spreadsheet.
        let csvPath = directory.file("timeline.csv")
        let export = try ManagedProcess(
            name: "keepalive export", executable: Tools.agent,
            arguments: ["export", "--from", day, "--to", day, "--format", "timeline-csv", "--output", csvPath, "--config", agent.configPath])
        let exportStatus = await export.waitForExit(timeout: 60)
        let csv = await captured { try String(contentsOfFile: csvPath, encoding: .utf8) }
        agent.stop()
        return FootPod(
            day: day, storedOnce: storedOnce, replayRead: replayRead, storedAfterReplay: storedAfterReplay, reply: reply,
            exportStatus: exportStatus, csv: csv)
    }

    static func footPodReply() async throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try await footPod.value.reply.get().utf8)) as? [String: Any])
    }

    @Test("10 minutes of RSC at 170 steps/min through the command transport: 1700 ± 1 % steps, cadence and foot-pod distance")
    func footPod() async throws {
        let reply: [String: Any]? = try await Self.footPodReply()
        let health = try #require(Self.health(reply), "reply: \(String(describing: reply))")
        let steps = try #require(health["steps"] as? Int, "health: \(health)")
        #expect(abs(steps - 1700) <= 17, "1700 ± 1 %, got \(steps)")
        #expect(health["steps_source"] as? String == "rsc")
        #expect(health["steps_estimated"] as? Bool == false)
        let cadence = try #require(health["cadence"] as? [String: Any])
        #expect(abs((cadence["avg"] as? Double ?? 0) - 170) < 0.5 && cadence["max"] as? Int == 170)
        #expect(abs((health["rsc_distance_m"] as? Double ?? 0) - 1800) < 1, "from the pod's total distance")
    }

    @Test("a replayed foot-pod bridge counts nothing twice")
    func footPodReplay() async throws {
        let outcome = try await Self.footPod.value
        try outcome.storedOnce.get()
        try outcome.replayRead.get()
        #expect(outcome.storedAfterReplay == 601, "a replay stores nothing new")
    }

    @Test("the day's step timeline adds up to the day's steps, in the reply and as CSV")
    func footPodTimeline() async throws {
        let outcome = try await Self.footPod.value
        let day = outcome.day
        let reply: [String: Any]? = try await Self.footPodReply()
        let steps = try #require(Self.health(reply)?["steps"] as? Int)
        let timeline = try #require(reply?["timeline"] as? [[String: Any]])
        #expect(timeline.count == 96)
        #expect(timeline.compactMap { $0["steps"] as? Int }.reduce(0, +) == steps, "the buckets add up to the day")
        #expect(timeline[32]["from"] as? String == "\(day)T08:00:00+00:00")
        #expect(timeline[32]["steps"] as? Int == 1700 && timeline[33]["steps"] as? Int == nil, "08:00–08:15 holds the run: \(timeline[32])")

        #expect(outcome.exportStatus == 0)
        let rows = try outcome.csv.get().split(separator: "\n")
        #expect(rows.first == "from,steps,hr_avg,hr_min,hr_max,distance_m,moving_s" && rows.count == 97)
        #expect(rows.dropFirst().compactMap { Int($0.split(separator: ",", omittingEmptySubsequences: false)[1]) }.reduce(0, +) == steps)
    }

    @Test("a foot pod streaming now: health/today shows its steps within today_interval_s")
    func liveToday() async throws {
        let broker = try MosquittoBroker()
        let today = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/today")
        let directory = try TemporaryDirectory("steps-today")
        // 120 notifications at 170/min, one a second, ending now: the fixture's payloads with today's times.
        let raws = try String(contentsOfFile: Tools.fixture("steps/rsc-170spm-10min.ndjson"), encoding: .utf8).split(separator: "\n")
            .prefix(121).compactMap { line in line.split(separator: "\"raw\":\"").last?.split(separator: "\"").first }
        let now = Int64(Date().timeIntervalSince1970) * 1000
        let lines = raws.enumerated().map { index, raw in
            #"{"ts":"\#(BridgeBacklog.timestamp(now - Int64(raws.count - 1 - index) * 1000))","sensor":"footpod","char":"2a53","raw":"\#(raw)"}"#
        }
        let path = try directory.write("live.ndjson", lines.joined(separator: "\n") + "\n")
        // In a zone where it is midday: the two minutes never straddle the agent's midnight.
        let agent = try AgentProcess(
            brokerPort: broker.port, timeZone: MiddayZone.at().identifier,
            extraConfig: Self.bridge(catting: path, pids: directory.file("pids")) + "[schedule]\ntoday_interval_s = 2\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        let message = try await today.waitFor(timeout: 20, "health/today with the pod's steps") { ($0.json?["steps"] as? Int ?? 0) > 0 }
        let steps = try #require(message.json?["steps"] as? Int)
        #expect(abs(steps - 340) <= 4, "120 s at 170/min = 340 steps ± 1 %, got \(steps)")
        #expect(message.json?["steps_source"] as? String == "rsc")
        agent.stop()
    }

    @Test("a strap's accelerometer batches through the command transport: steps estimated within 2 % of the synthesised walk's 506, marked estimated, stored as windows")
    func accelerometer() async throws {
        let broker = try MosquittoBroker()
        let directory = try TemporaryDirectory("steps-acc")
        let day = Self.day(daysAgo: 2)
        let lines = try Self.moved("steps/synthetic-walk-acc.ndjson", to: day, in: directory)
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: Self.bridge(catting: lines, pids: directory.file("pids")), directory: directory,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        // 340 s of signal in one-minute windows: the last one is stored once the strap has been quiet for 5 s.
        let windows = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM step_record WHERE kind = 'acc'")) ?? 0 }
        try await Wait.until(timeout: 30, "the step windows of 340 s of signal; log:\n\(agent.log.suffix(1500))") { windows() >= 6 }
        // The day's aggregate is computed from the rows at each query: once the windows are in, so are the steps.
        let health = Self.health(try await agent.queryReply([day]))
        let steps = try #require(health?["steps"] as? Int)
        #expect(abs(steps - 506) <= 10, "506 ± 2 %, got \(steps)")
        #expect(health?["steps_source"] as? String == "accelerometer")
        #expect(health?["steps_estimated"] as? Bool == true)
        #expect(health?["rsc_distance_m"] is NSNull)
        #expect(windows() <= 8, "steps per minute window, never the raw stream")
        agent.stop()
    }
}
