import Foundation
import Testing
import TestKit

@testable import Agent

/// The reply-topic allow-list, compared byte for byte.
@Suite("Reply routing")
struct ReplyRoutingTests {
    static func routing(_ extra: String = "") throws -> ReplyRouting {
        let config = try ConfigLoader.parse(
            text: "[device]\nid = \"dev\"\n" + extra, system: SystemDefaults(deviceID: "dev", timezone: "UTC"),
            credentials: SystemdCredentials(directory: nil))
        return ReplyRouting(config: config)
    }

    static func problem(_ routing: ReplyRouting, _ topic: String) -> String? { routing.problem(with: Array(topic.utf8)) }

    @Test(
        "topics that look like another level to String but sit in a refused tree byte for byte are refused",
        arguments: [
            "keepalive/dev/\u{301}x",  // a combining acute accent after the '/'
            "keepalive/dev/\u{200D}status",  // a zero-width joiner
            "keepalive/dev/\u{FE0F}",  // a variation selector
            "keepalive/dev\u{301}/x",  // another device, "dev" + combining mark
            "keepalive/\u{301}",
            "keepalive",
            "keepalive/other/selection/result",
            "hrbridge/\u{301}v1/strap/cmd",
            "hrbridge/v1/strap/cmd",
            "hrbridge",
            "$SYS/broker/x",
            "$\u{301}SYS/x",
        ])
    func refusedTrees(topic: String) throws {
        let routing = try Self.routing()
        #expect(Self.problem(routing, topic) != nil, "\(Array(topic.unicodeScalars))")
        let route = routing.route(responseTopic: topic, replyTo: nil)
        #expect(route.topic == "keepalive/dev/selection/result")
        #expect(route.refusal?.status == 403)
    }

    @Test("the String comparison this replaces is fooled by a combining mark")
    func stringPrefixIsFooled() throws {
        let topic = "keepalive/dev/\u{301}x"
        #expect(!topic.hasPrefix("keepalive/dev/"), "String.hasPrefix compares grapheme clusters")
    }

    @Test("the byte comparison is not fooled by a combining mark or by canonical equivalence")
    func bytesAreNotFooled() throws {
        let topic = "keepalive/dev/\u{301}x"
        #expect(Array(topic.utf8).starts(with: Array("keepalive/dev/".utf8)))
        // Canonically equivalent, different bytes: two topics to a broker.
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(Array("caf\u{E9}".utf8) != Array("cafe\u{301}".utf8))
    }

    @Test(
        "wildcards, U+0000, control characters, non-characters and invalid UTF-8 are refused",
        arguments: [
            Array("reply/+/x".utf8), Array("reply/#".utf8), Array("#".utf8), Array("reply/a\u{0}b".utf8), Array("reply/\u{1}".utf8),
            Array("reply/\u{7F}".utf8), Array("reply/\u{85}".utf8), Array("reply/\u{FFFF}".utf8), [0x72, 0x2F, 0xEF, 0xB7, 0x90],  // U+FDD0, a non-character
            [0x72, 0x2F, 0xC3], [0x72, 0x2F, 0xED, 0xA0, 0x80], [0x72, 0x2F, 0xC0, 0xAF], [0x72, 0x2F, 0xFF], [],
        ])
    func refusedBytes(topic: [UInt8]) throws {
        #expect(try Self.routing().problem(with: topic) != nil, "\(topic.prefix(16))")
    }

    @Test("a topic longer than MQTT's 65535 bytes is refused")
    func tooLong() throws {
        let routing = try Self.routing()
        #expect(routing.problem(with: Array(repeating: UInt8(ascii: "r"), count: 65_536)) != nil)
    }

    @Test("a topic of MQTT's 65535 bytes is allowed")
    func longest() throws {
        let routing = try Self.routing()
        #expect(routing.problem(with: Array(repeating: UInt8(ascii: "r"), count: 65_535)) == nil)
    }

    @Test("by default any other topic is allowed, also with marks and joiners outside the refused trees")
    func defaultAllowed() throws {
        let routing = try Self.routing()
        for topic in ["reply/me", "reply/\u{301}", "keepalivex/dev", "hrbridgex/1", "owntracks/a/b", "a", "/", "caf\u{E9}/\u{200D}"] {
            #expect(Self.problem(routing, topic) == nil, "\(topic)")
            #expect(routing.route(responseTopic: topic, replyTo: nil) == .init(topic: topic, refusal: nil))
        }
        #expect(routing.route(responseTopic: nil, replyTo: nil) == .init(topic: "keepalive/dev/selection/result", refusal: nil))
        // The v5 Response Topic wins over reply_to.
        #expect(routing.route(responseTopic: "reply/a", replyTo: "reply/b").topic == "reply/a")
        #expect(routing.route(responseTopic: nil, replyTo: "keepalive/dev/status").refusal?.code == .forbiddenTopic)
    }

    @Test("reply_topics narrows the list byte for byte")
    func replyTopicsNarrow() throws {
        let routing = try Self.routing("[query]\nreply_topics = [\"reply/#\", \"caf\u{E9}/+\"]\n")
        #expect(Self.problem(routing, "reply/me") == nil)
        #expect(Self.problem(routing, "reply") == nil, "'reply/#' matches its parent, as in MQTT")
        #expect(Self.problem(routing, "caf\u{E9}/x") == nil)
        #expect(Self.problem(routing, "cafe\u{301}/x") != nil, "canonically equivalent but other bytes")
        #expect(Self.problem(routing, "other/me") != nil)
        #expect(Self.problem(routing, "replyx/me") != nil)
    }

    @Test("reply_topics cannot widen the list")
    func replyTopicsCannotWiden() throws {
        // Still refused although "#"-like filters would match.
        let wide = try Self.routing("[query]\nreply_topics = [\"#\", \"+/+/+\"]\n")
        #expect(Self.problem(wide, "hrbridge/v1/strap/cmd") != nil)
        #expect(Self.problem(wide, "keepalive/dev/x") != nil)
        #expect(Self.problem(wide, "anything/else") == nil)
    }

    static func configuredRouting() throws -> ReplyRouting {
        try routing("""
            [mqtt]
            owntracks_topic = "owntracks/me/pi"
            [hr]
            topic = "sensors/+/hr"
            [query]
            extra_topics = ["fleet/selection/date"]
            """)
    }

    @Test("the bridge's tree follows [hr] topic")
    func configuredBridgeTree() throws {
        #expect(ReplyRouting.bridgeTree(of: "hrbridge/v1/+/measurement") == "hrbridge/#")
        #expect(ReplyRouting.bridgeTree(of: "home/hr/measurement") == "home/#")
        #expect(ReplyRouting.bridgeTree(of: "+/hr/measurement") == "+/hr/#")
        let routing = try Self.configuredRouting()
        #expect(Self.problem(routing, "sensors/strap/cmd") != nil)
        #expect(Self.problem(routing, "hrbridge/v1/strap/cmd") == nil, "no longer the bridge's")
    }

    @Test("the configured OwnTracks mirror topic is refused")
    func ownTracksMirrorRefused() throws {
        let routing = try Self.configuredRouting()
        #expect(Self.problem(routing, "owntracks/me/pi") != nil)
        #expect(Self.problem(routing, "owntracks/me/phone") == nil)
    }

    @Test("the configured request topics are refused")
    func requestTopicsRefused() throws {
        #expect(Self.problem(try Self.configuredRouting(), "fleet/selection/date") != nil)
    }

    @Test(
        "reply_topics must be filters that can match",
        arguments: [
            ("[query]\nreply_topics = [\"reply/#/x\"]\n", "not a filter"),
            ("[query]\nreply_topics = [\"$SYS/#\"]\n", "$"),
            ("[query]\nreply_topics = [\"keepalive/#\"]\n", "keepalive/"),
            ("[query]\nreply_topics = [\"keepalive\"]\n", "keepalive/"),
            ("[query]\nreply_topics = [\"reply/\u{85}\"]\n", "control"),
            ("[query]\nreply_topics = \"reply/#\"\n", "array"),
        ])
    func replyTopicsValidated(text: String, mentions: String) throws {
        do {
            _ = try ConfigLoader.parse(
                text: text, system: SystemDefaults(deviceID: "dev", timezone: "UTC"), credentials: SystemdCredentials(directory: nil))
            Issue.record("accepted: \(text)")
        } catch let error as ConfigError {
            #expect(error.key == "query.reply_topics")
            #expect(error.line == 2)
            #expect(error.message.contains(mentions) || mentions == "not a filter", "\(error)")
        }
    }
}

/// The allow-list and the order of checks with a real agent, broker and MQTT clients.
@Suite("Reply routing over a broker")
struct ReplyRoutingBrokerTests {
    struct Rig {
        let broker: MosquittoBroker
        let agent: AgentProcess
        let replies: MQTTSubscriber
        let topic = "keepalive/testpi/selection/date"
        let fallback = "keepalive/testpi/selection/result"
        /// A finished day: the store is empty, so the answer is quick (`has_data` false).
        let day = "2026-01-05"

        init(query: String) async throws {
            broker = try MosquittoBroker()
            replies = try await MQTTSubscriber(port: broker.port, filter: "#")
            agent = try AgentProcess(
                brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"none\"\n[query]\n\(query)\n",
                environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
            try await agent.process!.waitForLine(containing: "Starting service sl-service=QueryService")
        }

        /// Publishes `message` with a response topic and correlation data; returns the reply.
        @discardableResult
        func ask(_ message: String, responseTopic: String?, id: String, expectOn topic: String? = nil) async throws -> MQTTSubscriber.Message {
            var extra = ["-D", "publish", "correlation-data", id]
            if let responseTopic { extra += ["-D", "publish", "response-topic", responseTopic] }
            try await MQTTTools.publish(port: broker.port, topic: self.topic, message: message, extraArguments: extra)
            let expected = topic ?? responseTopic ?? fallback
            return try await replies.waitFor("the reply to \(id) on \(expected)") { $0.correlationData == id && $0.topic == expected }
        }

        /// Waits until the agent's subscription to the query topic is in at the broker: a query asked
        /// after it is answered, so each test asks once.
        func waitUntilAnswering() async throws {
            try await broker.waitForSubscription(to: topic)
        }
    }

    static func status(_ message: MQTTSubscriber.Message) -> String { message.userProperties }

    @Test("response topics in the agent's tree behind a combining mark, a joiner or a variation selector: 403 on the fallback topic, nothing published there")
    func unicodeTricks() async throws {
        let rig = try await Rig(query: "")
        try await rig.waitUntilAnswering()
        let tricks = ["keepalive/testpi/\u{301}status", "keepalive/testpi/\u{200D}location", "keepalive/testpi/\u{FE0F}", "keepalive/other\u{301}/x",
                      "hrbridge/\u{301}v1/strap/cmd"]
        for (index, topic) in tricks.enumerated() {
            let reply = try await rig.ask(rig.day, responseTopic: topic, id: "trick-\(index)", expectOn: rig.fallback)
            #expect(Self.status(reply) == "status:403", "\(topic)")
            // reply_to in the payload, for MQTT 3.1.1 requesters, is held to the same list.
            let json = #"{"date":"\#(rig.day)","reply_to":"\#(topic)"}"#
            let viaPayload = try await rig.ask(json, responseTopic: nil, id: "trick-json-\(index)", expectOn: rig.fallback)
            #expect(Self.status(viaPayload) == "status:403", "\(topic)")
        }
        let allowed = try await rig.ask(rig.day, responseTopic: "reply/\u{301}ok", id: "allowed")
        #expect(Self.status(allowed) == "status:200")
        #expect(!rig.replies.messages.contains { tricks.contains($0.topic) }, "a reply went to a refused topic")
        #expect(rig.agent.stop() == 0)
    }

    /// Refused and allowed requests against one agent with four tokens, once, for the three claims
    /// below: each reply's status property, or why none came. The agent and the broker are stopped
    /// before the outcome is handed out.
    struct OrderAndTokens: Sendable {
        /// Five rounds of: a topic in the agent's tree, one outside reply_topics, too large, too large to a refused topic.
        let refusals: [(forbidden: String, narrowed: String, oversized: String, oversizedToForbidden: String)]
        let tokens: [String]
        let overTheRate: String
        let oversizedWhenEmpty: String
        let forbiddenWhenEmpty: String
        let exitStatus: Int32?
    }

    static let orderAndTokensOutcome = Task { () async throws -> OrderAndTokens in
        // Four tokens, and one more only after 100 s: the test counts them exactly.
        let rig = try await Rig(query: "rate_per_s = 0.01\nburst = 4\nreply_topics = [\"reply/#\"]")
        defer { rig.agent.kill9(); rig.replies.stop(); rig.broker.stop() }
        try await rig.waitUntilAnswering()
        func status(_ message: String, responseTopic: String, id: String, expectOn topic: String? = nil) async -> String {
            do { return Self.status(try await rig.ask(message, responseTopic: responseTopic, id: id, expectOn: topic)) } catch { return "no reply: \(error)" }
        }
        let oversized = String(repeating: "x", count: 70_000)
        var refusals: [(forbidden: String, narrowed: String, oversized: String, oversizedToForbidden: String)] = []
        for index in 0..<5 {
            refusals.append((
                await status(rig.day, responseTopic: "keepalive/testpi/\(index)", id: "403-\(index)", expectOn: rig.fallback),
                await status(rig.day, responseTopic: "elsewhere/\(index)", id: "narrow-\(index)", expectOn: rig.fallback),
                await status(oversized, responseTopic: "reply/big", id: "413-\(index)"),
                // Too large and a refused topic: the size is judged first; the refusal goes to the fallback topic.
                await status(oversized, responseTopic: "keepalive/testpi/big", id: "413f-\(index)", expectOn: rig.fallback)))
        }
        var tokens: [String] = []
        for index in 0..<4 { tokens.append(await status(rig.day, responseTopic: "reply/me", id: "ok-\(index)")) }
        let over = await status(rig.day, responseTopic: "reply/me", id: "over")
        // With the bucket empty, size and reply topic are still judged first.
        let oversizedWhenEmpty = await status(oversized, responseTopic: "reply/me", id: "413-empty")
        let forbiddenWhenEmpty = await status(rig.day, responseTopic: "keepalive/testpi/x", id: "403-empty", expectOn: rig.fallback)
        return OrderAndTokens(
            refusals: refusals, tokens: tokens, overTheRate: over, oversizedWhenEmpty: oversizedWhenEmpty,
            forbiddenWhenEmpty: forbiddenWhenEmpty, exitStatus: rig.agent.stop())
    }

    @Test("size is judged first (413), then the reply topic (403), then the rate (429)")
    func orderOfChecks() async throws {
        let outcome = try await Self.orderAndTokensOutcome.value
        for round in outcome.refusals {
            #expect(round.forbidden == "status:403")
            #expect(round.oversized == "status:413")
            #expect(round.oversizedToForbidden == "status:413")
        }
        #expect(outcome.overTheRate == "status:429")
        #expect(outcome.oversizedWhenEmpty == "status:413")
        #expect(outcome.forbiddenWhenEmpty == "status:403")
        #expect(outcome.exitStatus == 0)
    }

    @Test("refusals take no token")
    func refusalsTakeNoToken() async throws {
        // All four tokens are still there after twenty refusals.
        for (index, token) in try await Self.orderAndTokensOutcome.value.tokens.enumerated() {
            #expect(token == "status:200", "request \(index)")
        }
    }

    @Test("reply_topics narrows the allowed response topics: 403 outside it, on the fallback topic")
    func replyTopicsNarrowOverABroker() async throws {
        for round in try await Self.orderAndTokensOutcome.value.refusals {
            #expect(round.narrowed == "status:403", "outside reply_topics")
        }
    }
}
