import Foundation
import Testing
import TestKit

/// The agent comes online and is stopped cleanly once, against a real broker; each test states
/// one claim on what was seen. The scenario stops the agent, the watchers and the broker (by PID,
/// through their owners) before its outcome is handed out.
@Suite("Agent lifecycle: online, then a clean stop", .serialized)
struct AgentOnlineOfflineTests {
    struct Outcome: Sendable {
        let online: MQTTSubscriber.Message
        let exitStatus: Int32?
        let log: String
        /// The offline status seen after the stop, or why none was.
        let offline: Result<MQTTSubscriber.Message, any Error>
        /// The retained offline status a newcomer saw after the stop, or why none was.
        let retainedForNewcomer: Result<MQTTSubscriber.Message, any Error>
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#")
        defer { watcher.stop() }
        let agent = try AgentProcess(brokerPort: broker.port)
        let online = try await watcher.waitFor("online status") {
            $0.topic == "keepalive/testpi/status" && $0.json?["state"] as? String == "online"
        }
        let status = agent.stop()
        let offline = await captured { try await watcher.waitFor("offline status") { $0.json?["state"] as? String == "offline" } }
        // Retained: a newcomer sees offline.
        let newcomer = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        defer { newcomer.stop() }
        let retained = await captured {
            try await newcomer.waitFor("retained offline") { $0.retained && $0.json?["state"] as? String == "offline" }
        }
        return Outcome(online: online, exitStatus: status, log: agent.log, offline: offline, retainedForNewcomer: retained)
    }

    @Test("status: online on connect with a seq, the version, the GPS state and the store's size")
    func onlineOnConnect() async throws {
        let json = try #require(try await Self.outcome.value.online.json)
        #expect((json["seq"] as? Int ?? 0) > 0)
        #expect(json["version"] as? String == "0.1.0")
        #expect((json["gps"] as? [String: Any])?["state"] as? String == "disconnected")
        #expect((json["store"] as? [String: Any])?["bytes"] as? Int ?? 0 > 0)
    }

    @Test("a clean stop exits 0")
    func cleanStopExitsZero() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.exitStatus == 0, "\(outcome.log)")
    }

    @Test("a clean stop publishes offline with a later seq")
    func cleanStopPublishesOffline() async throws {
        let outcome = try await Self.outcome.value
        let offline = try outcome.offline.get()
        #expect((offline.json?["seq"] as? Int ?? 0) > (outcome.online.json?["seq"] as? Int ?? 0))
    }

    @Test("the offline status of a clean stop is retained: a newcomer sees it")
    func offlineRetained() async throws {
        let retained = try await Self.outcome.value.retainedForNewcomer.get()
        #expect(retained.retained && retained.json?["state"] as? String == "offline")
    }
}
