import Foundation
import Testing
import TestKit

@testable import Store

/// `health/daily/<date>` and `health/today` from the running agent, with real bridge messages
/// over UDP and a real broker.
@Suite("Health publishing", .serialized)
struct HealthPublishingTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// One agent's days: a day missed while it was off, yesterday's backlog from a bridge, late
    /// data for it, live samples today, a restart. Run once for the five claims on it; the agent
    /// and the broker are stopped before the outcome is handed out.
    struct Outcome: Sendable {
        let yesterday: String
        let today: String
        /// Yesterday's lines as the bridge sent them (the real hour, re-dated).
        let lines: [String]
        let missed: Result<MQTTSubscriber.Message, any Error>
        let backlog: Result<MQTTSubscriber.Message, any Error>
        let republished: Result<MQTTSubscriber.Message, any Error>
        let todayMessage: Result<MQTTSubscriber.Message, any Error>
        let firstStop: Int32?
        let restarted: Result<MQTTSubscriber.Message, any Error>
        let dailiesBeforeRestart: Int
        let dailiesAfterRestart: Int
        let secondStop: Int32?
    }

    static let outcome = Task { () async throws -> Outcome in
        let today = LocalDay(containing: Date(), timeZone: Self.utc)
        let yesterday = today.previous
        let threeDaysAgo = yesterday.previous.previous
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/#")
        defer { events.stop() }
        let port = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\n[schedule]\ntoday_interval_s = 1\ndaily_grace_s = 0\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"], start: false)
        defer { agent.kill9() }

        // Data of a day that ended while the agent was off, already in the store.
        do {
            let store = try Store(path: agent.storePath)
            let start = threeDaysAgo.boundsMs.start + 36_000_000
            try await store.write(heartRates: (0..<10).map { i in
                StoredHeartRate(sensor: "s", timeMs: start + Int64(i) * 1000, receivedMs: start, bpm: 61 + i, contact: 2, valid: true, raw: [0x06, UInt8(61 + i)])
            })
        }
        try agent.start()
        func daily(_ day: LocalDay) -> (MQTTSubscriber.Message) -> Bool {
            { $0.topic == "keepalive/testpi/health/daily/\(day)" && !$0.retained }
        }
        let missed = await captured { try await events.waitFor(timeout: 20, "the missed day published at start", daily(threeDaysAgo)) }

        // The real hour, as a bridge delivering yesterday's backlog (UDP may drop a datagram:
        // resend until the day is complete; the store ignores what it already has).
        try await agent.process!.waitForLine(containing: "Starting service sl-service=BridgeService")
        let lines = try HeartRateFixture.lines(on: "\(yesterday)")
        try await HeartRateDelivery.send(lines, port: port, storePath: agent.storePath)
        let complete = { (message: MQTTSubscriber.Message) in
            daily(yesterday)(message) && (message.json?["heart_rate"] as? [String: Any])?["samples"] as? Int == lines.count
        }
        let backlog = await captured { try await events.waitFor(timeout: 15, "yesterday's daily with all \(lines.count) samples", complete) }

        // More late data for the finished day: republished with the change and a higher seq.
        let late = (0..<5).map { i in
            #"{"ts":"\#(yesterday)T23:00:0\#(i).000Z","sensor":"nsr-strap","raw":"0696"}"#
        }
        let changed = { (message: MQTTSubscriber.Message) in
            daily(yesterday)(message) && (message.json?["heart_rate"] as? [String: Any])?["samples"] as? Int == lines.count + 5
        }
        try await HeartRateDelivery.send(late, port: port, storePath: agent.storePath)
        let republished = await captured { try await events.waitFor(timeout: 15, "yesterday republished after late data", changed) }

        // Today: live samples show up in health/today.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let live = { (message: MQTTSubscriber.Message) in
            message.topic == "keepalive/testpi/health/today" && message.json?["date"] as? String == today.description
                && (message.json?["heart_rate"] as? [String: Any])?["samples"] as? Int ?? 0 > 0
        }
        let now = Date()
        try await HeartRateDelivery.send((1...3).map { i in
            #"{"ts":"\#(formatter.string(from: now.addingTimeInterval(-Double(i))))","sensor":"nsr-strap","raw":"0648"}"#
        }, port: port, storePath: agent.storePath)
        let todayMessage = await captured { try await events.waitFor(timeout: 15, "health/today with today's samples", live) }

        // A restart publishes nothing again for days whose aggregate did not change.
        let dailiesBefore = events.messages.filter { $0.topic.contains("/health/daily/") }.count
        let seqBefore = (try? todayMessage.get())?.json?["seq"] as? Int ?? 0
        let firstStop = agent.stop()
        try agent.start()
        let restarted = await captured {
            try await events.waitFor(timeout: 20, "health/today from the restarted agent") {
                $0.topic == "keepalive/testpi/health/today" && $0.json?["seq"] as? Int ?? 0 > seqBefore
            }
        }
        let dailiesAfter = events.messages.filter { $0.topic.contains("/health/daily/") }.count
        return Outcome(
            yesterday: yesterday.description, today: today.description, lines: lines, missed: missed, backlog: backlog,
            republished: republished, todayMessage: todayMessage, firstStop: firstStop, restarted: restarted,
            dailiesBeforeRestart: dailiesBefore, dailiesAfterRestart: dailiesAfter, secondStop: agent.stop())
    }

    @Test("days missed while the agent was off are published at start")
    func missedDaysAtStart() async throws {
        let missed = try await Self.outcome.value.missed.get()
        #expect((missed.json?["heart_rate"] as? [String: Any])?["samples"] as? Int == 10)
        #expect((missed.json?["heart_rate"] as? [String: Any])?["max"] as? Int == 70)
        #expect(missed.json?["final"] as? Bool == true)
    }

    @Test("a bridge backlog publishes yesterday equal to an independent computation")
    func dailyAndToday() async throws {
        let outcome = try await Self.outcome.value
        let lines = outcome.lines
        let backlog = try outcome.backlog.get()
        let heartRate = try #require(backlog.json?["heart_rate"] as? [String: Any])
        let reference = try HeartRateReference(lines: lines)
        #expect(heartRate["valid_samples"] as? Int == lines.count)
        #expect(heartRate["min"] as? Int == reference.valid.map(\.bpm).min())
        #expect(heartRate["max"] as? Int == reference.valid.map(\.bpm).max())
        #expect(abs((heartRate["avg"] as? Double ?? 0) - reference.average) <= 0.05)
        #expect(abs((heartRate["resting"] as? Double ?? 0) - (reference.resting ?? 0)) <= 0.05)
        #expect(abs((heartRate["rmssd_ms"] as? Double ?? 0) - (reference.rmssd ?? 0)) <= 0.05)
        #expect(abs(Double(heartRate["coverage_s"] as? Int ?? 0) - reference.coverageS) <= 0.5)
        let zones = try #require(heartRate["zones_s"] as? [Int])
        for (agentZone, expected) in zip(zones, reference.zonesS(maxHR: 190, restingHR: 60)) { #expect(abs(Double(agentZone) - expected) <= 0.5) }
        #expect(backlog.json?["date"] as? String == outcome.yesterday)
        #expect(backlog.json?["from"] as? String == "\(outcome.yesterday)T00:00:00+00:00")
        #expect((backlog.json?["location"] as? [String: Any])?["slots"] as? Int == 288)
    }

    @Test("late data for a finished day republishes it with the change and a higher seq")
    func lateDataRepublishes() async throws {
        let outcome = try await Self.outcome.value
        let republished = try outcome.republished.get()
        #expect((republished.json?["heart_rate"] as? [String: Any])?["max"] as? Int == 150)
        #expect(republished.json?["seq"] as? Int ?? 0 > (try outcome.backlog.get()).json?["seq"] as? Int ?? .max)
    }

    @Test("health/today updates with live samples")
    func todayUpdates() async throws {
        let outcome = try await Self.outcome.value
        let todayMessage = try outcome.todayMessage.get()
        #expect(todayMessage.json?["date"] as? String == outcome.today)
        #expect(todayMessage.json?["final"] as? Bool == false)
    }

    @Test("a restart republishes no day whose aggregate did not change")
    func restartRepublishesNothingUnchanged() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.firstStop == 0)
        _ = try outcome.restarted.get()
        #expect(outcome.dailiesAfterRestart == outcome.dailiesBeforeRestart)
        #expect(outcome.secondStop == 0)
    }
}

/// Bridge messages over UDP, as many as the socket takes at once, each chunk sent again until
/// the agent has stored it: UDP drops what does not fit the receive buffer, and the store
/// ignores what it already has.
enum HeartRateDelivery {
    static func send(_ lines: [String], port: Int, storePath: String, chunk: Int = 400) async throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func time(_ line: String) -> Int64 {
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            return Int64((formatter.date(from: object?["ts"] as? String ?? "")?.timeIntervalSince1970 ?? 0) * 1000)
        }
        for start in stride(from: 0, to: lines.count, by: chunk) {
            let part = Array(lines[start..<min(start + chunk, lines.count)])
            let times = part.map(time)
            let stored = {
                let db = try? SQLiteConnection(path: storePath, readOnly: true)
                let statement = try? db?.statement("SELECT count(*) FROM hr_sample WHERE ts_ms >= ? AND ts_ms <= ?")
                    .bind(.integer(times.min() ?? 0), .integer(times.max() ?? 0))
                return (try? statement?.step()) == true ? statement?.int(0) ?? 0 : 0
            }
            for attempt in 1...5 where stored() < part.count {
                UDPSender.send(port: port, lines: part, linesPerDatagram: 10)
                try? await Wait.until(timeout: 5, "chunk \(start / chunk) stored (try \(attempt))") { stored() >= part.count }
            }
            try await Wait.until(timeout: 1, "\(part.count) heart-rate messages from line \(start) stored") { stored() >= part.count }
        }
    }
}
