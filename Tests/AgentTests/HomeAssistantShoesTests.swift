import Foundation
import Testing
import TestKit

/// Shoes in Home Assistant over a real mosquitto and the agent process: a sensor per pair added
/// with `keepalive gear add`, removed (empty retained config) when the pair is retired, and after
/// a restart only the registered pair's config is kept. What Home Assistant itself makes of them
/// is checked by scripts/homeassistant/ha_check.py (HomeAssistantCheckTests).
@Suite("Home Assistant shoes", .serialized)
struct HomeAssistantShoesTests {
    static let pegasus = "homeassistant/sensor/keepalive_testpi/shoe_pegasus-41/config"
    static let trail = "homeassistant/sensor/keepalive_testpi/shoe_old_trail/config"

    typealias Run = (status: Int32, text: String)

    /// Two pairs added, one retired, the agent restarted: run once (one broker, the agent twice on
    /// one store) for the three claims on it. The agents and the broker are stopped before the
    /// outcome is handed out.
    struct Outcome: Sendable {
        let added: Run
        let trailAdded: Run
        let configs: Result<[String: String], any Error>
        let retired: Run
        let trailEmptied: Result<MQTTSubscriber.Message, any Error>
        let left: Result<[String: String], any Error>
        let firstStop: Int32?
        let afterRestart: Result<[String: String], any Error>
        let secondLog: String
    }

    static let outcome = Task { () async throws -> Outcome in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let first = try AgentProcess(brokerPort: broker.port)
        defer { first.stop() }
        try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 18, log: "\nthe agent's log:\n\(first.log)")
        let added = try await cli(first, ["gear", "add", "--name", "Pegasus 41", "--limit-km", "800", "--start-km", "120.5"])
        let trail = try await cli(first, ["gear", "add", "--id", "old_trail", "--name", "Old trail", "--limit-km", "700"])
        let configs = await captured { try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 20) }

        let removals = try await MQTTSubscriber(port: broker.port, filter: HomeAssistantLifecycleTests.node)
        defer { removals.stop() }
        let retired = try await cli(first, ["gear", "retire", "old_trail"])
        let emptied = await captured {
            try await removals.waitFor(timeout: 15, "the retired pair's config emptied") { $0.topic == Self.trail && $0.payload.isEmpty }
        }
        let left = await captured { try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 19) }
        let firstStop = first.stop()

        // Restarted: the registered pair is announced again and not removed as unknown.
        let second = try AgentProcess(brokerPort: broker.port, directory: first.directory)
        defer { second.stop() }
        let after = await captured {
            try await second.process!.waitForLine(containing: "announced the device to Home Assistant")
            try await Task.sleep(for: .seconds(2))
            return try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 19)
        }
        return Outcome(
            added: added, trailAdded: trail, configs: configs, retired: retired, trailEmptied: emptied, left: left,
            firstStop: firstStop, afterRestart: after, secondLog: second.log)
    }

    @Test("a sensor per pair, in km, with its limit as an attribute")
    func shoes() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.added.status == 0, "\(outcome.added.text)")
        #expect(outcome.trailAdded.status == 0, "\(outcome.trailAdded.text)")
        let configs = try outcome.configs.get()
        let payload = try #require(configs[Self.pegasus].flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(payload["state_topic"] as? String == "keepalive/testpi/gear/pegasus-41")
        #expect(payload["json_attributes_topic"] as? String == "keepalive/testpi/gear/pegasus-41")
        #expect(payload["unit_of_measurement"] as? String == "km" && payload["device_class"] as? String == "distance")
        #expect(payload["name"] as? String == "Shoes Pegasus 41")
        #expect((payload["json_attributes_template"] as? String)?.contains("limit_km") == true)
    }

    @Test("a retired pair's sensor is removed (empty retained config)")
    func retiredPairRemoved() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.retired.status == 0, "\(outcome.retired.text)")
        _ = try outcome.trailEmptied.get()
        let left = try outcome.left.get()
        #expect(left[Self.pegasus] != nil && left[Self.trail] == nil)
        #expect(outcome.firstStop == 0)
    }

    @Test("a restart keeps the registered pair's sensor only")
    func restartKeepsRegisteredPair() async throws {
        let outcome = try await Self.outcome.value
        let after = try outcome.afterRestart.get()
        #expect(after[Self.pegasus] != nil && after[Self.trail] == nil)
        #expect(!outcome.secondLog.contains("removing an entity this configuration no longer announces"), "\(outcome.secondLog)")
    }

    private static func cli(_ agent: AgentProcess, _ arguments: [String]) async throws -> (status: Int32, text: String) {
        try await ExportConsumers.run("keepalive \(arguments.first ?? "")", Tools.agent, arguments + ["--config", agent.configPath], timeout: 30)
    }
}
