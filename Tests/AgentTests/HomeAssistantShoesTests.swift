import Foundation
import Testing
import TestKit

/// Shoes in Home Assistant over a real mosquitto and the agent process: a sensor per pair added
/// with `keepalive gear add`, removed (empty retained config) when the pair is retired, and after
/// a restart only the registered pair's config is kept. What Home Assistant itself makes of them
/// is checked by scripts/homeassistant/ha_check.py (HomeAssistantCheckTests).
@Suite("Home Assistant shoes")
struct HomeAssistantShoesTests {
    static let pegasus = "homeassistant/sensor/keepalive_testpi/shoe_pegasus-41/config"
    static let trail = "homeassistant/sensor/keepalive_testpi/shoe_old_trail/config"

    @Test("a sensor per pair (km, with its limit as an attribute); a retired pair's sensor removed; a restart keeps the registered one only")
    func shoes() async throws {
        let broker = try MosquittoBroker()
        let first = try AgentProcess(brokerPort: broker.port)
        defer { first.stop() }
        try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 16)
        let added = try await cli(first, ["gear", "add", "--name", "Pegasus 41", "--limit-km", "800", "--start-km", "120.5"])
        #expect(added.status == 0, "\(added.text)")
        let trail = try await cli(first, ["gear", "add", "--id", "old_trail", "--name", "Old trail", "--limit-km", "700"])
        #expect(trail.status == 0, "\(trail.text)")
        let configs = try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 18)
        let payload = try #require(configs[Self.pegasus].flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(payload["state_topic"] as? String == "keepalive/testpi/gear/pegasus-41")
        #expect(payload["json_attributes_topic"] as? String == "keepalive/testpi/gear/pegasus-41")
        #expect(payload["unit_of_measurement"] as? String == "km" && payload["device_class"] as? String == "distance")
        #expect(payload["name"] as? String == "Shoes Pegasus 41")
        #expect((payload["json_attributes_template"] as? String)?.contains("limit_km") == true)

        let removals = try await MQTTSubscriber(port: broker.port, filter: HomeAssistantLifecycleTests.node)
        let retired = try await cli(first, ["gear", "retire", "old_trail"])
        #expect(retired.status == 0, "\(retired.text)")
        try await removals.waitFor(timeout: 15, "the retired pair's config emptied") { $0.topic == Self.trail && $0.payload.isEmpty }
        let left = try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 17)
        #expect(left[Self.pegasus] != nil && left[Self.trail] == nil)
        #expect(first.stop() == 0)

        // Restarted: the registered pair is announced again and not removed as unknown.
        let second = try AgentProcess(brokerPort: broker.port, directory: first.directory)
        defer { second.stop() }
        try await second.process!.waitForLine(containing: "announced the device to Home Assistant")
        try await Task.sleep(for: .seconds(2))
        let after = try await HomeAssistantLifecycleTests.waitForRetainedConfigs(port: broker.port, count: 17)
        #expect(after[Self.pegasus] != nil && after[Self.trail] == nil)
        #expect(!second.log.contains("removing an entity this configuration no longer announces"), "\(second.log)")
    }

    private func cli(_ agent: AgentProcess, _ arguments: [String]) async throws -> (status: Int32, text: String) {
        try await ExportConsumers.run("keepalive \(arguments.first ?? "")", Tools.agent, arguments + ["--config", agent.configPath], timeout: 30)
    }
}
