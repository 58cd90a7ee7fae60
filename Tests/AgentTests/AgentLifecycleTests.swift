import Foundation
import Testing
import TestKit

@testable import Store

/// The real agent binary against a real broker: online, offline, will.
@Suite("Agent lifecycle")
struct AgentLifecycleTests {
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

/// A store too large to check whole at start, damaged where a start-up check does not look.
@Suite("Store check in the background")
struct StoreCheckTests {
    @Test("damage found by the background check: the agent exits 75 and its next start moves the file aside, starts anew and says so")
    func damageFoundWhileRunning() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#")
        let environment = ["KEEPALIVE_STORE_FULL_CHECK_MAX_BYTES": "0", "KEEPALIVE_STORE_CHECK_AFTER_S": "0.5"]
        let agent = try AgentProcess(brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"none\"\n", environment: environment, start: false)
        do {
            let store = try Store(path: agent.storePath)
            try await store.write(fixes: (0..<2000).map {
                StoredFix(timeMs: 1_000_000 + Int64($0) * 1000, receivedMs: 1_000_000, lat: 52.5, lon: 13.4, mode: 3, timeSource: "system")
            })
        }
        let root = try #require(try SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT rootpage FROM sqlite_master WHERE name = 'fix'"))
        let pageSize = try #require(try SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("PRAGMA page_size"))
        let handle = try #require(FileHandle(forUpdatingAtPath: agent.storePath))
        try handle.seek(toOffset: UInt64(root - 1) * UInt64(pageSize))
        handle.write(Data(repeating: 0xA5, count: Int(pageSize)))
        try handle.close()

        try agent.start()
        let status = await agent.process!.waitForExit(timeout: 30)
        #expect(status == 75, "\(agent.log.suffix(3000))")
        #expect(agent.log.contains("the store file is damaged"))
        #expect(FileManager.default.fileExists(atPath: agent.storePath + ".damaged"))
        try await watcher.waitFor("offline status on the way out") { $0.topic == "keepalive/testpi/status" && $0.json?["state"] as? String == "offline" }

        try agent.start()
        let event = try await watcher.waitFor("the storage event of the replaced file") { $0.topic == "keepalive/testpi/event/storage" }
        let keptAs = event.json?["kept_as"] as? String
        #expect(keptAs?.hasPrefix(agent.storePath + ".corrupt-") == true, "\(event.payload)")
        try await watcher.waitFor("online again") { $0.topic == "keepalive/testpi/status" && $0.json?["state"] as? String == "online" }
        #expect(!FileManager.default.fileExists(atPath: agent.storePath + ".damaged"))
        try await agent.process!.waitForLine(containing: "store checked whole: intact", timeout: 15)
        #expect(agent.stop() == 0)
    }
}
