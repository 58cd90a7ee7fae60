import Foundation
import Testing
import TestKit

@testable import Store

/// Refused requests, sent once to one agent (QueryTests.Setup, replies capped at 20 000 bytes);
/// each test states one claim on the replies. The scenario stops the agent and the broker before
/// its outcome is handed out.
@Suite("Queries: errors", .serialized)
struct QueryErrorTests {
    typealias Run = (status: Int32?, output: String, errors: String)

    struct Refusal: Sendable {
        let request: String
        let code: String
        let status: Int
        let reply: Result<MQTTSubscriber.Message, any Error>
    }

    struct Outcome: Sendable {
        let refusals: [Refusal]
        let forbidden: [Result<MQTTSubscriber.Message, any Error>]
        let replies: [MQTTSubscriber.Message]
        let commandLineWhileRunning: Run
        let exitStatus: Int32?
        let commandLineWithoutStore: Run
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let setup = try await QueryTests.Setup.make(extraConfig: "[hr]\ntransport = \"none\"\n[query]\nmax_reply_bytes = 20000\n")
        defer { setup.agent.kill9(); setup.broker.stop() }
        let replies = try await MQTTSubscriber(port: setup.broker.port, filter: "#")
        defer { replies.stop() }
        let tomorrow = LocalDay(containing: Date(), timeZone: QueryTests.utc).next
        let cases: [(String, String, Int)] = [
            ("2026-13-45", "invalid_date", 400),
            ("yesterday", "invalid_date", 400),
            ("\(tomorrow)", "future_date", 400),
            ("{\"date\":", "bad_request", 400),
            (#"{"date":20261121}"#, "bad_request", 400),
            (#"{"date":"\#(setup.day)","include":["steps"]}"#, "bad_request", 400),
            (#"{"date":"\#(setup.day)","format":"kml"}"#, "bad_request", 400),
            (#"{"date":"\#(setup.day)","colour":"blue"}"#, "bad_request", 400),
            (String(repeating: "x", count: 70_000), "too_large", 413),
            (#"{"date":"\#(setup.day)","include":["track"],"track":"full"}"#, "too_large", 413),
        ]
        var refusals: [Refusal] = []
        for (index, (request, code, status)) in cases.enumerated() {
            let topic = "reply/error/\(index)"
            try await MQTTTools.publish(
                port: setup.broker.port, topic: setup.topic, message: request, extraArguments: ["-D", "publish", "response-topic", topic])
            let reply = await captured { try await replies.waitFor("the \(code) reply to \(request.prefix(60))") { $0.topic == topic } }
            refusals.append(Refusal(request: request, code: code, status: status, reply: reply))
        }

        // Forbidden response topics: the refusal goes to the fallback topic, never to them.
        var forbidden: [Result<MQTTSubscriber.Message, any Error>] = []
        for (index, request, extra) in [
            (0, "\(setup.day)", ["-D", "publish", "response-topic", "keepalive/testpi/location"]),
            (1, #"{"date":"\#(setup.day)","reply_to":"reply/+/x"}"#, []),
            (2, #"{"date":"\#(setup.day)","reply_to":"$SYS/broker/x"}"#, []),
            (3, #"{"date":"\#(setup.day)","reply_to":"keepalive/testpi/status"}"#, []),
        ] {
            try await MQTTTools.publish(
                port: setup.broker.port, topic: setup.topic, message: request,
                extraArguments: extra + ["-D", "publish", "correlation-data", "forbidden-\(index)"])
            forbidden.append(await captured {
                try await replies.waitFor("the refusal \(index) on the fallback topic") {
                    $0.topic == "keepalive/testpi/selection/result" && $0.correlationData == "forbidden-\(index)"
                }
            })
        }
        let seen = replies.messages

        // internal: the command line on a store that does not exist.
        let whileRunning = try await setup.query(["query", "\(setup.day)"].map { $0 })
        let exitStatus = setup.agent.stop()
        try FileManager.default.removeItem(atPath: setup.agent.storePath)
        let withoutStore = try await setup.query(["query", "\(setup.day)"])
        return Outcome(
            refusals: refusals, forbidden: forbidden, replies: seen, commandLineWhileRunning: whileRunning, exitStatus: exitStatus,
            commandLineWithoutStore: withoutStore)
    }

    @Test("every error is one reply with its code, status and a message")
    func errorReplies() async throws {
        for refusal in try await Self.outcome.value.refusals {
            let reply = try refusal.reply.get()
            let error = QueryTests.object(reply.payload)["error"] as? [String: Any]
            #expect(error?["code"] as? String == refusal.code, "\(refusal.request.prefix(60)) → \(reply.payload)")
            #expect(reply.userProperties == "status:\(refusal.status)")
            let message = error?["message"] as? String ?? ""
            #expect(!message.isEmpty)
        }
    }

    @Test("a reply too large says how to ask for less")
    func tooLargeSaysHow() async throws {
        let tooLarge = try await Self.outcome.value.refusals.last?.reply.get()
        #expect(tooLarge?.payload.contains("5min") == true, "the refusal says how to ask for less")
    }

    @Test("a forbidden response topic is answered on the fallback topic with forbidden_topic")
    func forbiddenTopicRefused() async throws {
        for reply in try await Self.outcome.value.forbidden.map({ try $0.get() }) {
            #expect((QueryTests.object(reply.payload)["error"] as? [String: Any])?["code"] as? String == "forbidden_topic")
            #expect(reply.userProperties == "status:403")
        }
    }

    @Test("no reply goes into the agent's own topics")
    func noReplyInOwnTopics() async throws {
        // A location slot published meanwhile is no reply.
        #expect(!(try await Self.outcome.value.replies).contains {
            ($0.topic == "keepalive/testpi/location" || $0.topic == "keepalive/testpi/status") && $0.payload.contains("\"ok\"")
        })
    }

    @Test("`keepalive query` fails with internal once the store file is gone")
    func commandLineInternalError() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.commandLineWhileRunning.status == 0)
        #expect(outcome.exitStatus == 0)
        #expect(outcome.commandLineWithoutStore.status == 1)
        #expect((QueryTests.object(outcome.commandLineWithoutStore.output)["error"] as? [String: Any])?["code"] as? String == "internal")
    }
}
