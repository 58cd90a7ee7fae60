import Foundation
import Testing
import TestKit

@testable import Store

/// A ride indoors, on a trainer: no GPS (`[gps] enabled = false`), a workout started and
/// stopped by command on `cmd/workout`, the bike's CSC sensor riding meanwhile through a
/// `command` bridge (Tests/Fixtures/tools/csc_ride.py, synthesised, stamped as it prints). The
/// workout's distance is the wheel's, and its record says so.
@Suite("A ride indoors: the workout's distance from the wheel")
struct IndoorRideTests {
    static let circumferenceMm = 2100
    /// 30 s at 2 Hz: 3.3 wheel turns a second (25 km/h on a 2100 mm wheel), 85 rpm.
    static let notifications = 60

    @Test("gps disabled, a workout by command, 30 s of CSC: distance_m is the wheel's turns × 2100 mm, distance_source sensor")
    func trainerRide() async throws {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let directory = try TemporaryDirectory("indoor-ride")
        let (go, done) = (directory.file("go"), directory.file("done"))
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/workout")
        let last = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/workout/last")
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        defer { events.stop(); last.stop(); status.stop() }
        let command = #"["python3", "\#(Tools.fixture("tools/csc_ride.py"))", "\#(go)", "\#(done)", "\#(Self.notifications)", "2", "3.3", "85"]"#
        // AgentProcess without a gpsd port writes `[gps] enabled = false`.
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"command\"\ncommand = \(command)\nstall_timeout_s = 3600\n[bike]\nwheel_circumference_mm = \(Self.circumferenceMm)\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        #expect(try String(contentsOfFile: agent.configPath, encoding: .utf8).contains("[gps]\nenabled = false"))
        try await status.waitFor(timeout: 30, "the agent online") { $0.payload.contains("\"online\"") }
        try await agent.process?.waitForLine(containing: "Starting service sl-service=CommandService", timeout: 30)

        // With a reply topic: the agent's answer says the command reached it (not sent twice).
        let started = try await MQTTTools.request(
            port: broker.port, topic: "keepalive/testpi/cmd/workout", message: #"{"op":"start","sport":"cycle"}"#, responseTopic: "reply/indoor",
            timeout: 10)
        #expect(started.contains(#""ok":true"#), "\(started)")
        try await agent.explainingFailure {
            _ = try await events.waitFor(timeout: 20, "event/workout started") { $0.json?["op"] as? String == "started" }
        }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        try await Wait.until(timeout: 60, "the sensor's \(Self.notifications) notifications printed; log:\n\(agent.log.suffix(1500))") {
            FileManager.default.fileExists(atPath: done)
        }
        let counted = try String(contentsOfFile: done, encoding: .utf8).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let wheelTurns = try #require(counted.first, "done: \(counted)")
        let stored = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM csc_record")) ?? 0 }
        try await Wait.until(timeout: 20, "\(Self.notifications) CSC rows stored, \(stored()) so far") { stored() == Self.notifications }

        try await MQTTTools.publish(port: broker.port, topic: "keepalive/testpi/cmd/workout", message: #"{"op":"stop"}"#)
        let record = try await agent.explainingFailure {
            try await last.waitFor(timeout: 30, "workout/last of the manual ride") { $0.json?["source"] as? String == "manual" }
        }
        print("indoor ride: \(wheelTurns) wheel turns; workout/last \(record.payload.prefix(600))")
        let workout = try #require(record.json)
        #expect(workout["sport"] as? String == "cycle", "\(record.payload)")
        #expect(workout["distance_source"] as? String == "sensor", "\(record.payload)")
        let expected = (Double(wheelTurns * Self.circumferenceMm) / 100).rounded() / 10
        #expect(workout["distance_m"] as? Double == expected, "\(wheelTurns) turns × 2.1 m = \(expected) m: \(record.payload)")
        #expect(wheelTurns >= 90, "30 s at 3.3 turns a second: \(wheelTurns)")
    }
}

