import Foundation
import Logging
import Testing
import TestKit

@testable import Bus

/// Where replies go and what they carry, asked once of one agent (QueryTests.Setup) by a v5
/// client with binary correlation data, by mosquitto_pub with printable data, without a response
/// topic, and as MQTT 3.1.1; each test states one claim. The scenario stops the requester, the
/// agent and the broker before its outcome is handed out.
@Suite("Queries: reply routing", .serialized)
struct QueryRoutingTests {
    static let correlation: [UInt8] = [0x00, 0xFF, 0x0A, 0x80, 0x7F, 0x01]

    struct Outcome: Sendable {
        let binary: Result<MQTTIncomingMessage, any Error>
        let printable: Result<MQTTSubscriber.Message, any Error>
        let fallback: Result<MQTTSubscriber.Message, any Error>
        let v3: Result<MQTTSubscriber.Message, any Error>
        let exitStatus: Int32?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let setup = try await QueryTests.Setup.make()
        defer { setup.agent.kill9(); setup.broker.stop() }
        let replies = try await MQTTSubscriber(port: setup.broker.port, filter: "#")
        defer { replies.stop() }

        // Binary correlation data through our own client: NUL, 0xFF, a newline.
        let requester = MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: setup.broker.port, clientID: "requester", reconnectMinS: 0.1, reconnectMaxS: 0.5),
            logger: Logger(label: "requester"))
        let received = MessageLog(requester)
        requester.subscribe("reply/bin")
        requester.start()
        defer { requester.stop() }
        let binary = await captured {
            try await Wait.until(timeout: 10, "the requester connected") { requester.connectionState == .connected }
            // Sent again every half second until the reply comes (our subscription may not be in yet).
            var lastSent = Date.distantPast
            try await Wait.until(timeout: 20, "the binary-correlated reply") {
                if received.messages.isEmpty && Date().timeIntervalSince(lastSent) > 0.5 {
                    lastSent = Date()
                    _ = try? requester.publish(MQTTMessage(
                        topic: setup.topic, payload: Array("\(setup.day)".utf8),
                        properties: MQTTProperties(responseTopic: "reply/bin", correlationData: Self.correlation)))
                }
                return !received.messages.isEmpty
            }
            return try #require(received.messages.first)
        }

        // Printable correlation data and the status property as mosquitto_sub shows them.
        try await MQTTTools.publish(
            port: setup.broker.port, topic: setup.topic, message: "\(setup.day)",
            extraArguments: ["-D", "publish", "response-topic", "reply/printable", "-D", "publish", "correlation-data", "abc-123"])
        let printable = await captured { try await replies.waitFor("the reply on reply/printable") { $0.topic == "reply/printable" } }

        // No response topic, no reply_to: the fallback topic.
        try await MQTTTools.publish(port: setup.broker.port, topic: setup.topic, message: "\(setup.day)")
        let fallback = await captured { try await replies.waitFor("a reply on selection/result") { $0.topic == "keepalive/testpi/selection/result" } }

        // MQTT 3.1.1 has no response topic: reply_to in the request.
        try await MQTTTools.publish(
            port: setup.broker.port, topic: setup.topic, message: #"{"date":"\#(setup.day)","reply_to":"reply/v3"}"#,
            extraArguments: ["-V", "311"])
        let v3 = await captured { try await replies.waitFor("the reply on reply/v3") { $0.topic == "reply/v3" } }
        return Outcome(binary: binary, printable: printable, fallback: fallback, v3: v3, exitStatus: setup.agent.stop())
    }

    @Test("binary correlation data is echoed byte for byte")
    func binaryCorrelationEchoed() async throws {
        #expect(try await Self.outcome.value.binary.get().properties.correlationData == Self.correlation)
    }

    @Test("a reply's content type and status properties are set")
    func contentTypeAndStatus() async throws {
        let binary = try await Self.outcome.value.binary.get()
        #expect(binary.properties.contentType == "application/json")
        #expect(binary.properties.userProperties.contains { $0 == ("status", "200") })
    }

    @Test("printable correlation data and the status property reach a mosquitto_pub requester")
    func printableCorrelationEchoed() async throws {
        let printable = try await Self.outcome.value.printable.get()
        #expect(printable.correlationData == "abc-123")
        #expect(printable.userProperties == "status:200")
    }

    @Test("a request without a response topic or reply_to is answered on the fallback topic")
    func fallbackTopic() async throws {
        #expect(QueryTests.object(try await Self.outcome.value.fallback.get().payload)["ok"] as? Bool == true)
    }

    @Test("a v3.1.1 requester is answered on its reply_to")
    func replyToForV3() async throws {
        #expect(QueryTests.object(try await Self.outcome.value.v3.get().payload)["has_data"] as? Bool == true)
    }

    @Test("the agent stops cleanly (exit 0) after answering")
    func cleanStop() async throws {
        #expect(try await Self.outcome.value.exitStatus == 0)
    }
}
