import Foundation
import Testing
import TestKit

@testable import Store

/// deploy/mosquitto/keepalive-device.acl, as shipped, in a real mosquitto with TLS and passwords.
@Suite("Broker ACL", .serialized)
struct BrokerACLTests {
    static let acl = "\(Tools.packageRoot)/deploy/mosquitto/keepalive-device.acl"

    /// mosquitto_pub as `user`; returns what it printed (a refused QoS 1 publish exits 0 but says so).
    static func publish(port: Int, tls: [String], topic: String, message: String) async throws -> String {
        let process = try ManagedProcess(
            name: "mosquitto_pub \(topic)", executable: Tools.mosquittoPub,
            arguments: ["-h", "127.0.0.1", "-p", "\(port)", "-V", "5", "-q", "1", "-t", topic, "-m", message] + tls)
        #expect(await process.waitForExit(timeout: 10) == 0, "\(process.text)")
        return process.text
    }

    /// The agent as its device user beside a phone and a bridge, each with its own login, once,
    /// for the three claims below. The agent, the clients and the broker are stopped before the
    /// outcome is handed out.
    struct Outcome: Sendable {
        let online: Result<MQTTSubscriber.Message, any Error>
        let answered: Bool
        let firstReplyProperties: String?
        let fallbackReply: Result<MQTTSubscriber.Message, any Error>
        let storedFromBridge: Int64?
        let reconnectCommand: Result<MQTTSubscriber.Message, any Error>
        let requestForDevice: Result<MQTTSubscriber.Message, any Error>
        let deviceReceived: [MQTTSubscriber.Message]
        let intoOtherDevice: String
        let asTheDevice: String
        let intoDeviceData: String
        let marker: Result<MQTTSubscriber.Message, any Error>
        let phoneSaw: [MQTTSubscriber.Message]
        let agentLog: String
        let exitStatus: Int32?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let directory = try TemporaryDirectory("acl")
        let certificates = try await TestCertificates.make(in: directory)
        let users = [("keepalive-pi", "pi-pass"), ("phone", "phone-pass"), ("hrbridge", "bridge-pass")]
        let passwords = try await TestCertificates.passwordFile(in: directory, users: users)
        let broker = try MosquittoBroker.tls(certificates, passwordFile: passwords, extraConfig: "acl_file \(Self.acl)")
        defer { broker.stop() }
        func login(_ user: String, _ password: String) -> [String] { ["--cafile", certificates.caFile, "-u", user, "-P", password] }
        let device = login("keepalive-pi", "pi-pass"), phone = login("phone", "phone-pass"), bridge = login("hrbridge", "bridge-pass")

        let phoneSees = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#", extraArguments: phone)
        let phoneReplies = try await MQTTSubscriber(port: broker.port, filter: "reply/phone/#", extraArguments: phone)
        let bridgeCommands = try await MQTTSubscriber(port: broker.port, filter: "hrbridge/v1/+/cmd", extraArguments: bridge)
        // Another client logged in as the device: what the broker lets that user receive.
        let deviceReceives = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#", extraArguments: device)

        let secret = try directory.write("mqtt.password", "pi-pass\n")
        chmod(secret, 0o600)
        let agent = try AgentProcess(
            brokerPort: broker.port, deviceID: "pi",
            extraConfig: "[hr]\nstall_timeout_s = 1\nreacquire_max_s = 1\n[query]\nreply_topics = [\"reply/#\"]\n", directory: directory,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"], start: false)
        try agent.addToConfig(section: "mqtt", lines: [
            "tls = true", "cafile = \"\(certificates.caFile)\"", "username = \"keepalive-pi\"", "password_file = \"\(secret)\"",
        ])
        try agent.start()
        defer { agent.kill9() }
        let online = await captured {
            try await phoneSees.waitFor(timeout: 20, "the agent online, as keepalive-pi over TLS") {
                $0.topic == "keepalive/pi/status" && $0.json?["state"] as? String == "online"
            }
        }

        // A query from the phone, asked once the agent's subscription is in, answered in its reply area.
        try await broker.waitForSubscription(to: "keepalive/pi/selection/date")
        _ = try await Self.publish(
            port: broker.port, tls: phone + ["-D", "publish", "response-topic", "reply/phone/1", "-D", "publish", "correlation-data", "q1"],
            topic: "keepalive/pi/selection/date", message: "2026-01-05")
        let answered = (try? await phoneReplies.waitFor(timeout: 10, "the reply") { $0.topic == "reply/phone/1" }) != nil
        let firstReplyProperties = phoneReplies.messages.first?.userProperties
        // Without a response topic: the fallback topic, inside the device's tree.
        _ = try await Self.publish(port: broker.port, tls: phone, topic: "keepalive/pi/selection/date", message: "2026-01-05")
        let fallbackReply = await captured {
            try await phoneSees.waitFor("a reply on keepalive/pi/selection/result") { $0.topic == "keepalive/pi/selection/result" }
        }

        // The bridge: a real measurement in, then (silent for stall_timeout_s) a reconnect command out.
        let line = try #require(try HeartRateFixture.lines(on: HeartRateFixture.yesterday).first)
        let count = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil }
        // Published once, after the agent's subscription is in.
        try await broker.waitForSubscription(to: "hrbridge/v1/+/measurement")
        _ = try await Self.publish(port: broker.port, tls: bridge, topic: "hrbridge/v1/nsr-strap/measurement", message: String(line))
        try? await Wait.until(timeout: 10, "the bridge's measurement stored") { (count() ?? 0) > 0 }
        let storedFromBridge = count()
        let command = await captured {
            try await bridgeCommands.waitFor(timeout: 15, "a reconnect command to the bridge") { $0.topic == "hrbridge/v1/nsr-strap/cmd" }
        }

        // A request for another device is not delivered to this device's user; one for it is (after it, in order).
        _ = try await Self.publish(port: broker.port, tls: phone, topic: "keepalive/other/selection/date", message: "for-other")
        _ = try await Self.publish(port: broker.port, tls: phone, topic: "keepalive/pi/selection/date", message: "for-pi")
        let requestForDevice = await captured { try await deviceReceives.waitFor("the request for pi") { $0.payload == "for-pi" } }
        let deviceReceived = deviceReceives.messages

        // Writing outside its tree: refused by the broker (v5 PUBACK 0x87), never delivered.
        let intoOther = try await Self.publish(port: broker.port, tls: device, topic: "keepalive/other/status", message: "forged")
        let asDevice = try await Self.publish(port: broker.port, tls: phone, topic: "keepalive/pi/status", message: "forged")
        let intoData = try await Self.publish(port: broker.port, tls: bridge, topic: "keepalive/pi/location", message: "forged")
        _ = try await Self.publish(port: broker.port, tls: device, topic: "keepalive/pi/event/marker", message: "marker")
        let marker = await captured { try await phoneSees.waitFor("the marker after the forgeries") { $0.payload == "marker" } }
        let agentLog = agent.log
        return Outcome(
            online: online, answered: answered, firstReplyProperties: firstReplyProperties, fallbackReply: fallbackReply,
            storedFromBridge: storedFromBridge, reconnectCommand: command, requestForDevice: requestForDevice, deviceReceived: deviceReceived,
            intoOtherDevice: intoOther, asTheDevice: asDevice, intoDeviceData: intoData, marker: marker, phoneSaw: phoneSees.messages,
            agentLog: agentLog, exitStatus: agent.stop())
    }

    @Test("the agent works as its device user: online, answering queries, the bridge both ways")
    func deviceUser() async throws {
        let outcome = try await Self.outcome.value
        _ = try outcome.online.get()
        #expect(outcome.answered, "no reply in reply/phone/1; agent:\n\(outcome.agentLog.suffix(1500))")
        #expect(outcome.firstReplyProperties == "status:200")
        _ = try outcome.fallbackReply.get()
        #expect(outcome.storedFromBridge == 1, "the bridge's measurement was not stored; agent:\n\(outcome.agentLog.suffix(1500))")
        #expect(try outcome.reconnectCommand.get().json?["op"] as? String == "reconnect")
        // The agent itself never published anything the ACL refuses.
        #expect(!outcome.agentLog.contains("broker refused a message"), "\(outcome.agentLog.suffix(2000))")
        #expect(outcome.exitStatus == 0)
    }

    @Test("the broker keeps the device user out of another device's tree")
    func outOfOtherDevices() async throws {
        let outcome = try await Self.outcome.value
        _ = try outcome.requestForDevice.get()
        #expect(!outcome.deviceReceived.contains { $0.topic.hasPrefix("keepalive/other/") }, "the device user received another device's request")
        #expect(!outcome.deviceReceived.contains { $0.topic == "keepalive/pi/status" }, "the device user reads only selection/date")
        // Writing outside its tree: refused by the broker (v5 PUBACK 0x87), never delivered.
        #expect(outcome.intoOtherDevice.contains("Not authorized"), "\(outcome.intoOtherDevice)")
    }

    @Test("the broker keeps other users out of the device's own tree")
    func othersOutOfTheDevice() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.asTheDevice.contains("Not authorized"), "\(outcome.asTheDevice)")
        #expect(outcome.intoDeviceData.contains("Not authorized"), "\(outcome.intoDeviceData)")
        _ = try outcome.marker.get()
        #expect(!outcome.phoneSaw.contains { $0.payload == "forged" })
    }
}
