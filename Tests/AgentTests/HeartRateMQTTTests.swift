import Foundation
import Testing
import TestKit

@testable import Store

/// The `mqtt` heart-rate transport (the default) against a real broker, with the real fixture.
@Suite("Heart rate over MQTT")
struct HeartRateMQTTTests {
    @Test("bridge messages on hrbridge/v1/+/measurement are stored; a silent bridge is told to reconnect; offline is followed")
    func mqttBridge() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "#")
        let directory = try TemporaryDirectory("hr-mqtt")
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"mqtt\"\nstall_timeout_s = 1\nreacquire_max_s = 1\n",
            directory: directory)
        try await agent.process!.waitForLine(containing: "MQTT connected")
        let lines = try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8)
            .split(separator: "\n").prefix(100).joined(separator: "\n") + "\n"
        let input = try directory.write("bridge.ndjson", lines)
        try await MQTTTools.publish(port: broker.port, topic: "hrbridge/v1/strap/status", message: "online", retain: true)
        let count = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil }
        // The agent's SUBSCRIBE may not be through yet on the first try: publish again until stored.
        for attempt in 1...5 where count() != 100 {
            let bridge = try ManagedProcess(
                name: "bridge", executable: "/bin/sh",
                arguments: ["-c", "\(Tools.mosquittoPub) -h 127.0.0.1 -p \(broker.port) -q 1 -t hrbridge/v1/strap/measurement -l < \(input)"])
            _ = await bridge.waitForExit(timeout: 10)
            try? await Wait.until(timeout: 4, "100 notifications stored from MQTT (try \(attempt))") { count() == 100 }
        }
        #expect(count() == 100)
        // Silence: the agent commands the bridge to reconnect, again after the backoff.
        let commands = try await watcher.waitFor(count: 2, timeout: 15, "two reconnect commands") {
            $0.topic == "hrbridge/v1/strap/cmd" && $0.payload == #"{"op":"reconnect"}"#
        }
        #expect(commands.count >= 2)
        let event = try await watcher.waitFor("an hr_reacquire event") { $0.topic == "keepalive/testpi/event/hr_reacquire" }
        #expect(event.json?["transport"] as? String == "mqtt")
        // The bridge's retained status going offline is followed.
        try await MQTTTools.publish(port: broker.port, topic: "hrbridge/v1/strap/status", message: "offline", retain: true)
        try await watcher.waitFor("status hr disconnected") {
            $0.topic == "keepalive/testpi/status" && ($0.json?["hr"] as? [String: Any])?["state"] as? String == "disconnected"
        }
        #expect(agent.stop() == 0)
    }
}
