import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// What the outbox does with each v5 PUBACK reason code: transient refusals are sent again after
/// a backoff, permanent ones set aside and counted in `status.outbox.set_aside`.
@Suite("PUBACK reason codes", .serialized)
struct PubackPolicyTests {
    @Test("the policy by code", arguments: [
        (Int32(0x00), PubackPolicy.delivered), (0x10, .delivered), (0x80, .retry), (0x83, .retry), (0x89, .retry), (0x91, .retry),
        (0x97, .retry), (0x87, .setAside), (0x90, .setAside), (0x95, .setAside), (0x99, .setAside), (0xA2, .setAside),
    ])
    func policy(code: Int32, expected: PubackPolicy) {
        #expect(PubackPolicy(reasonCode: code) == expected)
    }

    /// A broker that answers with scripted reason codes (a real mosquitto cannot be made to say
    /// "quota exceeded" or "server busy" on demand), and the agent connected to it.
    struct Scripted {
        let broker: ManagedProcess
        let agent: AgentProcess

        init(rules: [String], extraConfig: String = "") async throws {
            let port = Ports.free()
            broker = try ManagedProcess(
                name: "scripted_broker", executable: Tools.find("python3"),
                arguments: [Tools.fixture("tools/scripted_broker.py"), "\(port)"] + rules)
            try await broker.waitForLine(containing: "listening")
            agent = try AgentProcess(
                brokerPort: port, extraConfig: "[schedule]\nstatus_interval_s = 1\n" + extraConfig,
                environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        }

        /// The PUBLISHes the broker saw: (topic, payload JSON, the code it answered).
        var publishes: [(topic: String, json: [String: Any]?, code: Int)] {
            broker.lines.compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let topic = object["topic"] as? String, let code = object["code"] as? Int
                else { return nil }
                let payload = (object["payload"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                return (topic, payload, code)
            }
        }
    }

    /// A silent UDP bridge: an `event/hr_reacquire` every second or two — messages that are
    /// never superseded, so the one refused is the one that must come again.
    static var silentBridge: String { "[hr]\ntransport = \"udp\"\nudp_port = \(Ports.free())\nstall_timeout_s = 1\nreacquire_max_s = 1\n" }

    @Test("a transient refusal (quota exceeded, server busy, unspecified) is sent again after a backoff, and nothing is set aside",
          arguments: [0x97, 0x89, 0x80])
    func transientRetried(code: Int) async throws {
        let rig = try await Scripted(rules: ["/event/hr_reacquire=\(String(code, radix: 16))x2"], extraConfig: Self.silentBridge)
        var refusedSeq: Int?
        try await Wait.until(timeout: 30, "the refused event accepted at last; broker saw:\n\(rig.broker.text.suffix(1500))") {
            let events = rig.publishes.filter { $0.topic.hasSuffix("/event/hr_reacquire") }
            refusedSeq = events.first { $0.code == code }?.json?["seq"] as? Int
            return events.contains { $0.code == 0 && ($0.json?["seq"] as? Int) == refusedSeq && refusedSeq != nil }
        }
        let sameMessage = rig.publishes.filter { ($0.json?["seq"] as? Int) == refusedSeq }
        #expect(sameMessage.map(\.code) == [code, code, 0], "refused twice, then delivered: \(sameMessage.map(\.code))")
        try await Wait.until(timeout: 10, "a status counting two retries and nothing set aside") {
            rig.publishes.contains {
                let outbox = $0.json?["outbox"] as? [String: Any]
                return outbox?["retried"] as? Int == 2 && outbox?["set_aside"] as? Int == 0
            }
        }
        #expect(rig.agent.log.contains("refused a message for now"))
        #expect(rig.agent.stop() == 0)
    }

    @Test("a permanent refusal (not authorized, payload format invalid) sets the message aside, counts it, and the queue goes on",
          arguments: [0x87, 0x99])
    func permanentSetAside(code: Int) async throws {
        let rig = try await Scripted(rules: ["/event/hr_reacquire=\(String(code, radix: 16))"], extraConfig: Self.silentBridge)
        try await Wait.until(timeout: 30, "a status counting a set-aside message; broker saw:\n\(rig.broker.text.suffix(1500))") {
            rig.publishes.contains { (($0.json?["outbox"] as? [String: Any])?["set_aside"] as? Int ?? 0) >= 1 }
        }
        // Not sent again, and status keeps flowing behind it.
        let events = rig.publishes.filter { $0.topic.hasSuffix("/event/hr_reacquire") }
        let seqs = events.compactMap { $0.json?["seq"] as? Int }
        #expect(Set(seqs).count == seqs.count, "a set-aside message is not retried: \(seqs)")
        let before = rig.publishes.count
        try await Wait.until(timeout: 10, "more status after the refusal") {
            rig.publishes.dropFirst(before).filter { $0.topic.hasSuffix("/status") }.count >= 2
        }
        #expect(rig.agent.stop() == 0)
        let db = try SQLiteConnection(path: rig.agent.storePath, readOnly: true)
        let setAside = try db.statement("SELECT count(*) FROM outbox WHERE rejected_reason = ?").bind(.text("v5 reason code \(code)"))
        #expect(try setAside.step() && setAside.int(0) >= 1, "kept in the outbox with its reason")
    }

    @Test("a real mosquitto refusing by ACL (0x87): set aside and counted in status.outbox.set_aside")
    func mosquittoACL() async throws {
        let directory = try TemporaryDirectory("acl-count")
        let acl = try directory.write("acl", "topic readwrite keepalive/testpi/status\ntopic read keepalive/#\n")
        let broker = try MosquittoBroker(extraConfig: "acl_file \(acl)")
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let port = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\nstall_timeout_s = 1\nreacquire_max_s = 1\n[schedule]\nstatus_interval_s = 1\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await status.waitFor(timeout: 30, "status.outbox.set_aside ≥ 1") {
            (($0.json?["outbox"] as? [String: Any])?["set_aside"] as? Int ?? 0) >= 1
        }
        #expect(agent.stop() == 0)
    }
}
