import Foundation
import Testing
import TestKit

@testable import Store

/// The `mqtt` heart-rate transport (the default) against a real broker, with the real fixture.
/// One run: 100 bridge messages, then silence, then the bridge's status offline; each test states
/// one claim on what that run showed. The scenario stops the agent, the watcher and the broker
/// before its outcome is handed out.
@Suite("Heart rate over MQTT", .serialized)
struct HeartRateMQTTTests {
    struct Outcome: Sendable {
        let storedNotifications: Int64?
        let reconnectCommands: Result<[MQTTSubscriber.Message], any Error>
        let reacquireEvent: Result<MQTTSubscriber.Message, any Error>
        let offlineFollowed: Result<MQTTSubscriber.Message, any Error>
        let exitStatus: Int32?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "#")
        defer { watcher.stop() }
        let directory = try TemporaryDirectory("hr-mqtt")
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"mqtt\"\nstall_timeout_s = 1\nreacquire_max_s = 1\n",
            directory: directory)
        defer { agent.kill9() }
        try await agent.process!.waitForLine(containing: "MQTT connected")
        let lines = try HeartRateFixture.lines(on: HeartRateFixture.yesterday).prefix(100).joined(separator: "\n") + "\n"
        let input = try directory.write("bridge.ndjson", lines)
        try await MQTTTools.publish(port: broker.port, topic: "hrbridge/v1/strap/status", message: "online", retain: true)
        let count = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil }
        // Published once, after the agent's subscription is in at the broker.
        try await broker.waitForSubscription(to: "hrbridge/v1/+/measurement")
        let bridge = try ManagedProcess(
            name: "bridge", executable: "/bin/sh",
            arguments: ["-c", "\(Tools.mosquittoPub) -h 127.0.0.1 -p \(broker.port) -q 1 -t hrbridge/v1/strap/measurement -l < \(input)"])
        _ = await bridge.waitForExit(timeout: 10)
        try? await Wait.until(timeout: 10, "100 notifications stored from MQTT") { count() == 100 }
        let stored = count()
        // Silence: the agent commands the bridge to reconnect, again after the backoff.
        let commands = await captured {
            try await watcher.waitFor(count: 2, timeout: 15, "two reconnect commands") {
                $0.topic == "hrbridge/v1/strap/cmd" && $0.payload == #"{"op":"reconnect"}"#
            }
        }
        let event = await captured { try await watcher.waitFor("an hr_reacquire event") { $0.topic == "keepalive/testpi/event/hr_reacquire" } }
        // The bridge's retained status going offline is followed.
        try await MQTTTools.publish(port: broker.port, topic: "hrbridge/v1/strap/status", message: "offline", retain: true)
        let offline = await captured {
            try await watcher.waitFor("status hr disconnected") {
                $0.topic == "keepalive/testpi/status" && ($0.json?["hr"] as? [String: Any])?["state"] as? String == "disconnected"
            }
        }
        return Outcome(
            storedNotifications: stored, reconnectCommands: commands, reacquireEvent: event, offlineFollowed: offline,
            exitStatus: agent.stop())
    }

    @Test("bridge messages on hrbridge/v1/+/measurement are stored")
    func measurementsStored() async throws {
        #expect(try await Self.outcome.value.storedNotifications == 100)
    }

    @Test("a silent bridge is told to reconnect, again after the backoff")
    func silentBridgeToldToReconnect() async throws {
        #expect(try await Self.outcome.value.reconnectCommands.get().count >= 2)
    }

    @Test("a silent bridge's reacquiring is announced as event/hr_reacquire")
    func reacquireAnnounced() async throws {
        #expect(try await Self.outcome.value.reacquireEvent.get().json?["transport"] as? String == "mqtt")
    }

    @Test("the bridge's retained status going offline is followed in status.hr")
    func offlineFollowed() async throws {
        _ = try await Self.outcome.value.offlineFollowed.get()
    }

    @Test("the agent stops cleanly (exit 0) after a bridge went silent and offline")
    func cleanStop() async throws {
        #expect(try await Self.outcome.value.exitStatus == 0)
    }
}
