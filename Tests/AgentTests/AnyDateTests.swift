import Foundation
import Testing
import TestKit

@testable import Store

/// The suite passes on any date: the agent run with its clock a year ahead, and across a local
/// midnight, through the agent's own clock hook (`KEEPALIVE_FAULT_CLOCK_OFFSET_S`: everything the
/// agent reads of the time of day is that far off, as on a Pi whose clock is wrong; the monotonic
/// clock is not). libfaketime was tried first: preloaded into the Swift test runner it stalls its
/// child-process pipes, and into the agent by the kit's spawner the agent lost its arguments.
/// The test places its fixtures next to the agent's clock, as every test places them next to the
/// run's (`HeartRateFixture`): what is checked is that nothing in the agent or the fixtures
/// depends on the distance between the day a test runs and the day its data was recorded.
@Suite("Any date", .serialized)
struct AnyDateTests {
    static func agent(aheadBy offsetS: Double, brokerPort: Int, timeZone: String = "UTC", extraConfig: String) throws -> AgentProcess {
        try AgentProcess(
            brokerPort: brokerPort, timeZone: timeZone, extraConfig: extraConfig,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1", "KEEPALIVE_FAULT_CLOCK_OFFSET_S": "\(offsetS)"])
    }

    @Test("a year from now: the real heart-rate hour, moved to the agent's yesterday, is stored at its own stamps once, and a query for that day answers it")
    func yearAhead() async throws {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let replies = try await MQTTSubscriber(port: broker.port, filter: "reply/#")
        defer { replies.stop() }
        let agent = try Self.agent(
            aheadBy: 365 * 86_400, brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"mqtt\"\n[query]\nreply_topics = [\"reply/#\"]\n")
        defer { agent.kill9() }
        // The agent's yesterday, a year and a day from the run's.
        let day = HeartRateFixture.day(offset: 364)
        let lines = try HeartRateFixture.lines(on: day).prefix(100)
        let input = try agent.directory.write("bridge.ndjson", lines.joined(separator: "\n") + "\n")
        try await broker.waitForSubscription(to: "hrbridge/v1/+/measurement")
        // Sent twice: the second copy is a replay, stored once.
        for _ in 0..<2 {
            let bridge = try ManagedProcess(
                name: "bridge", executable: "/bin/sh",
                arguments: ["-c", "\(Tools.mosquittoPub) -h 127.0.0.1 -p \(broker.port) -q 1 -t hrbridge/v1/strap/measurement -l < \(input)"])
            #expect(await bridge.waitForExit(timeout: 10) == 0)
        }
        let db = { try? SQLiteConnection(path: agent.storePath, readOnly: true) }
        try await Wait.until(timeout: 20, "100 notifications stored; log:\n\(agent.log.suffix(1500))") {
            (try? db()?.scalarInt("SELECT count(*) FROM hr_sample")) == 100
        }
        // At the bridge's own stamps (believed: inside the agent's 7 days), not at receive times.
        let first = try #require(db()).statement(sql: "SELECT min(ts_ms) FROM hr_sample")
        #expect(try first.step() && first.int64(0) == 1_795_248_001_000 + HeartRateFixture.shiftMs(to: day))
        first.reset()
        #expect(!agent.log.contains("receive_time"), "no stamp was replaced by the receive time")
        try await broker.waitForSubscription(to: "keepalive/testpi/selection/date")
        try await MQTTTools.publish(
            port: broker.port, topic: "keepalive/testpi/selection/date", message: day,
            extraArguments: ["-D", "publish", "response-topic", "reply/any-date", "-D", "publish", "correlation-data", "d1"])
        let reply = try await replies.waitFor(timeout: 20, "the reply for \(day)") { $0.correlationData == "d1" }
        let heartRate = (reply.json?["health"] as? [String: Any])?["heart_rate"] as? [String: Any]
        #expect(heartRate?["samples"] as? Int == 100, "\(reply.payload.prefix(400))")
        #expect(agent.stop() == 0)
    }

    @Test("across a local midnight a year from now: the day that ended is published final, today is the new day")
    func acrossMidnight() async throws {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let health = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/#")
        defer { health.stop() }
        // 23:59:40 in Berlin (CEST), a year and some months from the run's day.
        let year = Calendar(identifier: .gregorian).component(.year, from: Date()) + 1
        let ended = "\(year)-06-30"
        let start = try Date.ISO8601FormatStyle().parse("\(ended)T21:59:40Z")
        let agent = try Self.agent(
            aheadBy: start.timeIntervalSinceNow, brokerPort: broker.port, timeZone: "Europe/Berlin",
            extraConfig: "[hr]\ntransport = \"mqtt\"\n[schedule]\ntoday_interval_s = 1\ndaily_grace_s = 0\n")
        defer { agent.kill9() }
        try await broker.waitForSubscription(to: "hrbridge/v1/+/measurement")
        // A notification without a stamp: stored at the agent's receive time (its clock 20 s before midnight).
        try await MQTTTools.publish(port: broker.port, topic: "hrbridge/v1/strap/measurement", message: #"{"seq":1,"sensor":"strap","raw":"0648"}"#)
        let daily = try await health.waitFor(timeout: 60, "health/daily/\(ended) after midnight; log:\n\(agent.log.suffix(1500))") {
            $0.topic == "keepalive/testpi/health/daily/\(ended)"
        }
        #expect(daily.json?["final"] as? Bool == true && daily.json?["date"] as? String == ended, "\(daily.payload.prefix(300))")
        #expect((daily.json?["heart_rate"] as? [String: Any])?["samples"] as? Int == 1)
        let today = try await health.waitFor(timeout: 30, "health/today for \(year)-07-01") {
            $0.topic == "keepalive/testpi/health/today" && $0.json?["date"] as? String == "\(year)-07-01"
        }
        #expect(today.json?["tz"] as? String == "Europe/Berlin")
        #expect(agent.stop() == 0)
    }
}
