import Foundation
import Testing
import TestKit

/// The real agent binary against a real broker: online, offline, will.
@Suite("Agent lifecycle")
struct AgentLifecycleTests {
    @Test("status: online on connect with a seq; a clean stop publishes offline and exits 0")
    func onlineThenCleanOffline() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#")
        let agent = try AgentProcess(brokerPort: broker.port)
        let online = try await watcher.waitFor("online status") {
            $0.topic == "keepalive/testpi/status" && $0.json?["state"] as? String == "online"
        }
        let json = try #require(online.json)
        #expect((json["seq"] as? Int ?? 0) > 0)
        #expect(json["version"] as? String == "0.1.0")
        #expect((json["gps"] as? [String: Any])?["state"] as? String == "disconnected")
        #expect((json["store"] as? [String: Any])?["bytes"] as? Int ?? 0 > 0)
        let status = agent.stop()
        #expect(status == 0, "\(agent.log)")
        let offline = try await watcher.waitFor("offline status") { $0.json?["state"] as? String == "offline" }
        #expect((offline.json?["seq"] as? Int ?? 0) > (json["seq"] as? Int ?? 0))
        // Retained: a newcomer sees offline.
        let newcomer = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        try await newcomer.waitFor("retained offline") { $0.retained && $0.json?["state"] as? String == "offline" }
    }

    @Test("SIGKILL of the agent: the broker publishes the retained offline will")
    func willOnKill() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let agent = try AgentProcess(brokerPort: broker.port)
        try await watcher.waitFor("online") { $0.json?["state"] as? String == "online" }
        agent.kill9()
        let will = try await watcher.waitFor("the will") { $0.json?["state"] as? String == "offline" }
        #expect(will.json?["seq"] is Int)
    }

    @Test("no broker at start: the agent keeps running, retries, and comes online when the broker appears")
    func brokerLate() async throws {
        let port = Ports.free()
        let agent = try AgentProcess(brokerPort: port)
        try await agent.process!.waitForLine(containing: "MQTT connect failed", timeout: 10)
        try await agent.process!.waitForLine(containing: "MQTT reconnecting", timeout: 10)
        #expect(agent.process!.isRunning)
        let broker = try MosquittoBroker(port: port)
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        try await watcher.waitFor(timeout: 15, "online after the broker appeared") { $0.json?["state"] as? String == "online" }
    }

    @Test("MQTT 3.1.1 is selectable: the agent comes online and its will works the same")
    func mqtt311() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status", protocolVersion: "mqttv311")
        let agent = try AgentProcess(brokerPort: broker.port, start: false)
        try agent.addToConfig(section: "mqtt", lines: ["protocol = 311"])
        try agent.start()
        try await watcher.waitFor("online over 3.1.1") { $0.json?["state"] as? String == "online" }
        agent.kill9()
        try await watcher.waitFor("the will over 3.1.1") { $0.json?["state"] as? String == "offline" }
    }

    @Test("a store that cannot be created stops the agent with a clear message")
    func unwritableStore() async throws {
        let broker = try MosquittoBroker()
        let agent = try AgentProcess(brokerPort: broker.port, store: "/proc/keepalive/k.db")
        let status = await agent.process!.waitForExit(timeout: 10)
        #expect(status == 73, "\(agent.log)")
        #expect(agent.log.contains("cannot open the store"))
    }
}
