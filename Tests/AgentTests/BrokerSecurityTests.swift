import Foundation
import Testing
import TestKit

@testable import Store

/// TLS and username/password against a real mosquitto.
@Suite("Broker security")
struct BrokerSecurityTests {
    @Test("TLS with a CA and server certificate made here: the agent comes online")
    func tls() async throws {
        let directory = try TemporaryDirectory("tls")
        let certificates = try await TestCertificates.make(in: directory)
        let broker = try Self.tlsBroker(certificates)
        let agent = try AgentProcess(brokerPort: broker.port, directory: directory, start: false)
        try agent.addToConfig(section: "mqtt", lines: ["tls = true", "cafile = \"\(certificates.caFile)\""])
        try agent.start()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#", extraArguments: ["--cafile", certificates.caFile])
        try await watcher.waitFor(timeout: 15, "online over TLS") { $0.json?["state"] as? String == "online" }
        #expect(agent.log.contains("MQTT connected"))
    }

    @Test("TLS with a CA that did not sign the broker's certificate: reported and retried, not a dead loop")
    func tlsWrongCA() async throws {
        let directory = try TemporaryDirectory("tls")
        let certificates = try await TestCertificates.make(in: directory)
        let otherDirectory = try TemporaryDirectory("tls-other")
        let other = try await TestCertificates.make(in: otherDirectory)
        let broker = try Self.tlsBroker(certificates)
        let agent = try AgentProcess(brokerPort: broker.port, directory: directory, start: false)
        try agent.addToConfig(section: "mqtt", lines: ["tls = true", "cafile = \"\(other.caFile)\""])
        try agent.start()
        let process = try #require(agent.process)
        try await process.waitForLines(containingAny: ["MQTT connect failed", "MQTT connection lost"], count: 2)
        #expect(process.isRunning)
    }

    @Test("username and password file: accepted")
    func usernamePassword() async throws {
        let directory = try TemporaryDirectory("auth")
        let passwords = try await TestCertificates.passwordFile(in: directory, user: "pi", password: "correct horse")
        let broker = try MosquittoBroker(extraConfig: "password_file \(passwords)")

        let good = try AgentProcess(brokerPort: broker.port, deviceID: "good", directory: directory, start: false)
        let goodPassword = try directory.write("good.pw", "correct horse\n")
        try good.addToConfig(section: "mqtt", lines: ["username = \"pi\"", "password_file = \"\(goodPassword)\""])
        try good.start()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#", extraArguments: ["-u", "pi", "-P", "correct horse"])
        try await watcher.waitFor(timeout: 15, "online with the right password") {
            $0.topic == "keepalive/good/status" && $0.json?["state"] as? String == "online"
        }
    }

    @Test("username and a wrong password: reported and retried, the password never logged")
    func wrongPassword() async throws {
        let directory = try TemporaryDirectory("auth")
        let passwords = try await TestCertificates.passwordFile(in: directory, user: "pi", password: "correct horse")
        let broker = try MosquittoBroker(extraConfig: "password_file \(passwords)")

        let badDirectory = try TemporaryDirectory("auth-bad")
        let bad = try AgentProcess(brokerPort: broker.port, deviceID: "bad", directory: badDirectory, start: false)
        let badPassword = try badDirectory.write("bad.pw", "wrong\n")
        try bad.addToConfig(section: "mqtt", lines: ["username = \"pi\"", "password_file = \"\(badPassword)\""])
        try bad.start()
        let process = try #require(bad.process)
        try await process.waitForLines(containingAny: ["not authorised", "Not authorized"], count: 2)
        #expect(process.isRunning)
        #expect(!bad.log.contains("wrong"), "the password must never be logged")
    }

    /// A broker whose listener speaks TLS only, with the given server certificate.
    static func tlsBroker(_ certificates: TestCertificates) throws -> MosquittoBroker {
        try MosquittoBroker(extraConfig: """
            cafile \(certificates.caFile)
            certfile \(certificates.certFile)
            keyfile \(certificates.keyFile)
            """)
    }
}

@Suite("Broker refusals")
struct BrokerRefusalTests {
    @Test("a message the broker refuses (v5 PUBACK 0x87) is set aside, kept, and does not block the queue")
    func refusedMessageSetAside() async throws {
        let directory = try TemporaryDirectory("acl")
        // Anonymous clients may write status only: location is refused with "not authorized".
        let acl = try directory.write("acl", "topic readwrite keepalive/testpi/status\ntopic read keepalive/#\n")
        let broker = try MosquittoBroker(extraConfig: "acl_file \(acl)")
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.2)
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#")
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nlocation_interval_s = 1\nstatus_interval_s = 1\n", directory: directory,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await agent.process!.waitForLine(containing: "broker refused a message", timeout: 20)
        // Status keeps flowing after the refusal: the queue is not blocked behind it.
        let before = watcher.messages.count
        try await Wait.until(timeout: 10, "two more status messages") {
            watcher.messages.dropFirst(before).filter { $0.topic.hasSuffix("/status") }.count >= 2
        }
        #expect(!watcher.messages.contains { $0.topic.hasSuffix("/location") })
        agent.stop()
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let setAside = try db.scalarInt("SELECT count(*) FROM outbox WHERE topic LIKE '%/location' AND rejected_reason LIKE '%135%'")
        #expect((setAside ?? 0) >= 1)
    }
}
