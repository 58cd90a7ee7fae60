import Foundation
import Testing
import TestKit

@testable import Agent

/// Resend requests on `<root>/selection/seq` to a real agent on a real mosquitto: the scenario
/// runs once (the agent publishes `status` every second, a dozen are captured as the broker
/// delivered them), then asks for them again; each test states one claim on the replies.
@Suite("Resend by seq", .serialized)
struct ResendTests {
    struct Outcome: Sendable {
        /// seq → (topic, payload) as a subscriber received them.
        let delivered: [Int: [String]]
        let first: Int
        let last: Int
        /// The replies to a request for all of them and to one for seqs not taken yet.
        let wholeReply: String
        let beyondReply: String
        let refusals: [Refusal]

        var whole: [String: Any]? { Self.object(wholeReply) }
        var beyond: [String: Any]? { Self.object(beyondReply) }
        static func object(_ text: String) -> [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] }
    }

    struct Refusal: Sendable {
        let request: String
        let reply: String
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"none\"\n[schedule]\nstatus_interval_s = 1\n[homeassistant]\nenabled = false\n")
        defer { agent.stop() }
        let statuses = try await watcher.waitFor(count: 12, timeout: 60, "a dozen status messages") { $0.json?["seq"] is Int }
        var delivered: [Int: [String]] = [:]
        for message in statuses { if let seq = message.json?["seq"] as? Int { delivered[seq] = [message.topic, message.payload] } }
        let first = try #require(delivered.keys.min()), last = try #require(delivered.keys.max())
        func ask(_ request: String, _ id: Int) async throws -> String {
            try await MQTTTools.request(
                port: broker.port, topic: "keepalive/testpi/selection/seq", message: request, responseTopic: "reply/resend/\(id)")
        }
        let whole = try await ask(#"{"from":\#(first),"to":\#(last)}"#, 1)
        let beyond = try await ask(#"{"from":\#(last + 1_000_000),"to":\#(last + 1_000_002)}"#, 2)
        var refusals: [Refusal] = []
        for (index, request) in [#"{"from":5}"#, #"{"from":9,"to":3}"#, #"{"from":1.5,"to":3}"#, #"{"from":1,"to":2,"colour":1}"#, "12"].enumerated() {
            refusals.append(Refusal(request: request, reply: try await ask(request, 10 + index)))
        }
        return Outcome(delivered: delivered, first: first, last: last, wholeReply: whole, beyondReply: beyond, refusals: refusals)
    }

    @Test("delivered messages come back as published: topic, seq and payload byte for byte")
    func resentAsPublished() async throws {
        let outcome = try await Self.outcome.value
        let whole = try #require(outcome.whole, "no JSON reply")
        #expect(whole["ok"] as? Bool == true)
        let messages = try #require(whole["messages"] as? [[String: Any]])
        for (seq, sent) in outcome.delivered {
            let resent = messages.first { $0["seq"] as? Int == seq }
            #expect(resent?["topic"] as? String == sent[0] && resent?["payload"] as? String == sent[1], "seq \(seq): \(String(describing: resent))")
        }
        #expect(whole["next"] == nil, "a dozen status messages fit one reply")
    }

    @Test("seqs the agent has no message for are named in not_kept, never silently missing")
    func notKeptIsSaid() async throws {
        let outcome = try await Self.outcome.value
        let beyond = try #require(outcome.beyond)
        #expect((beyond["messages"] as? [Any])?.isEmpty == true)
        let notKept = try #require(beyond["not_kept"] as? [[Int]])
        #expect(notKept == [[outcome.last + 1_000_000, outcome.last + 1_000_002]])
        // Within the dozen: every seq either resent or named.
        let whole = try #require(outcome.whole)
        var covered = Set((whole["messages"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int })
        for pair in whole["not_kept"] as? [[Int]] ?? [] { covered.formUnion(pair[0]...pair[1]) }
        #expect(covered == Set(outcome.first...outcome.last))
    }

    @Test("a malformed resend request gets a bad_request error reply")
    func malformedRequestsAreRefused() async throws {
        let outcome = try await Self.outcome.value
        for refusal in outcome.refusals {
            #expect(refusal.reply.contains(#""ok":false"#) && refusal.reply.contains("bad_request"), "\(refusal.request) → \(refusal.reply)")
        }
    }

    @Test("a resend request is parsed as whole seqs from ≤ to", arguments: [
        (#"{"from":3,"to":7}"#, true), (#"{"from":3,"to":3,"reply_to":"r/1"}"#, true), (#"{"from":-1,"to":3}"#, false),
        (#"{"from":true,"to":3}"#, false), (#"{"to":3}"#, false), ("[1,2]", false),
    ])
    func parsing(request: String, valid: Bool) {
        let parsed = ResendRequest.parse(Array(request.utf8))
        #expect(((try? parsed.get()) != nil) == valid, "\(request): \(parsed)")
    }
}
