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

    @Test("10 minutes of RSC at 170 steps/min through the command transport: 1700 ± 1 % steps, cadence and foot-pod distance; a replayed bridge counts nothing twice; the timeline adds up")
    func footPod() async throws {
        let broker = try MosquittoBroker()
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
        try await Wait.until(timeout: 10, "601 RSC notifications stored") { stored() == 601 }
        try await Wait.until(timeout: 10, "the replay to be read (3 starts)") { starts() >= 3 }
        #expect(stored() == 601, "a replay stores nothing new")

        let reply = try await agent.queryReply([day, "--include", "health", "timeline"])
        let health = try #require(Self.health(reply), "reply: \(String(describing: reply))")
        let steps = try #require(health["steps"] as? Int, "health: \(health)")
        #expect(abs(steps - 1700) <= 17, "1700 ± 1 %, got \(steps)")
        #expect(health["steps_source"] as? String == "rsc")
        #expect(health["steps_estimated"] as? Bool == false)
        let cadence = try #require(health["cadence"] as? [String: Any])
        #expect(abs((cadence["avg"] as? Double ?? 0) - 170) < 0.5 && cadence["max"] as? Int == 170)
        #expect(abs((health["rsc_distance_m"] as? Double ?? 0) - 1800) < 1, "from the pod's total distance")

        let timeline = try #require(reply?["timeline"] as? [[String: Any]])
        #expect(timeline.count == 96)
        #expect(timeline.compactMap { $0["steps"] as? Int }.reduce(0, +) == steps, "the buckets add up to the day")
        #expect(timeline[32]["from"] as? String == "\(day)T08:00:00+00:00")
        #expect(timeline[32]["steps"] as? Int == 1700 && timeline[33]["steps"] as? Int == nil, "08:00–08:15 holds the run: \(timeline[32])")

        // The same buckets as CSV, for a spreadsheet.
        let csvPath = directory.file("timeline.csv")
        let export = try ManagedProcess(
            name: "keepalive export", executable: Tools.agent,
            arguments: ["export", "--from", day, "--to", day, "--format", "timeline-csv", "--output", csvPath, "--config", agent.configPath])
        #expect(await export.waitForExit(timeout: 60) == 0)
        let rows = try String(contentsOfFile: csvPath, encoding: .utf8).split(separator: "\n")
        #expect(rows.first == "from,steps,hr_avg,hr_min,hr_max,distance_m,moving_s" && rows.count == 97)
        #expect(rows.dropFirst().compactMap { Int($0.split(separator: ",", omittingEmptySubsequences: false)[1]) }.reduce(0, +) == steps)
        agent.stop()
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
        let agent = try AgentProcess(
            brokerPort: broker.port,
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
