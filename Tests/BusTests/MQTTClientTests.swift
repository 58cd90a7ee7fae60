import Foundation
import Logging
import Synchronization
import Testing
import TestKit

@testable import Bus

/// The libmosquitto wrapper against a real mosquitto on loopback.
@Suite("MQTT client")
struct MQTTClientTests {
    func client(port: Int, id: String = "bus-test-\(UInt32.random(in: 0...UInt32.max))", will: MQTTMessage? = nil) -> MQTTClient {
        MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: port, clientID: id, will: will, reconnectMinS: 0.1, reconnectMaxS: 0.5),
            logger: Logger(label: "test"))
    }

    /// Collects a client's events on a task; `next` waits for one matching a predicate.
    final class EventLog: Sendable {
        private let events = Mutex<[MQTTEvent]>([])

        init(_ client: MQTTClient) {
            Task { [weak self] in
                for await event in client.events { self?.events.withLock { $0.append(event) } }
            }
        }

        var all: [MQTTEvent] { events.withLock { $0 } }

        func waitFor(_ what: String, timeout: Double = 10, _ predicate: @escaping (MQTTEvent) -> Bool) async throws -> MQTTEvent {
            var found: MQTTEvent?
            try await Wait.until(timeout: timeout, what) {
                found = all.first(where: predicate)
                return found != nil
            }
            return found!
        }

        func count(_ predicate: (MQTTEvent) -> Bool) -> Int { all.filter(predicate).count }
    }

    static func isConnected(_ event: MQTTEvent) -> Bool { if case .connected = event { true } else { false } }

    /// A client with its event log, started and connected; the caller stops it.
    func connectedClient(port: Int, subscribing filters: [String] = [], will: MQTTMessage? = nil) async throws -> (MQTTClient, EventLog) {
        let client = client(port: port, will: will)
        let log = EventLog(client)
        for filter in filters { client.subscribe(filter) }
        client.start()
        _ = try await log.waitFor("connected", Self.isConnected)
        return (client, log)
    }

    /// One QoS 1 publish to a real broker with a subscriber, run once for the two claims on it;
    /// the client, the subscriber and the broker are stopped before the outcome is handed out.
    struct PublishOutcome: Sendable {
        let acknowledged: Result<MQTTEvent, any Error>
        let received: Result<MQTTSubscriber.Message, any Error>
    }

    static let publishOutcome = Task { () async throws -> PublishOutcome in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try await MQTTSubscriber(port: broker.port, filter: "bus/#")
        defer { subscriber.stop() }
        let (client, log) = try await MQTTClientTests().connectedClient(port: broker.port)
        defer { client.stop() }
        let sent = try client.publish(MQTTMessage(topic: "bus/one", payload: Array("hello".utf8)))
        let acknowledged = await captured {
            try await log.waitFor("PUBACK for mid \(sent.mid)") {
                if case .published(let session, let mid, let code) = $0 { return session == sent.session && mid == sent.mid && code < 0x80 }
                return false
            }
        }
        let received = await captured { try await subscriber.waitFor("bus/one") { $0.topic == "bus/one" && $0.payload == "hello" } }
        return PublishOutcome(acknowledged: acknowledged, received: received)
    }

    @Test("publish QoS 1 is acknowledged with its session and mid")
    func publishAndAck() async throws {
        _ = try await Self.publishOutcome.value.acknowledged.get()
    }

    @Test("a subscriber receives a QoS 1 publish")
    func publishReceived() async throws {
        _ = try await Self.publishOutcome.value.received.get()
    }

    @Test("publishing while disconnected is refused, not queued in libmosquitto's RAM")
    func refusesWhileDisconnected() throws {
        let client = client(port: Ports.free())
        #expect(throws: MQTTError.self) { try client.publish(MQTTMessage(topic: "x", payload: [])) }
        client.start()
        defer { client.stop() }
        #expect(throws: MQTTError.self) { try client.publish(MQTTMessage(topic: "x", payload: [])) }
    }

    @Test("v5 properties both ways: response topic and binary correlation data in, echoed out")
    func v5Properties() async throws {
        let broker = try MosquittoBroker()
        let (client, log) = try await connectedClient(port: broker.port, subscribing: ["svc/request"])
        defer { client.stop() }
        // mosquitto_pub cannot send binary correlation data, nor mosquitto_sub print it: the
        // requester is a second client of ours.
        let (requester, requesterLog) = try await connectedClient(port: broker.port, subscribing: ["svc/reply"])
        defer { requester.stop() }
        let correlation: [UInt8] = [0x00, 0xFF, 0x10, 0x7F, 0x80]
        _ = try requester.publish(MQTTMessage(
            topic: "svc/request", payload: Array("q".utf8),
            properties: MQTTProperties(contentType: "text/plain", responseTopic: "svc/reply", correlationData: correlation,
                                       userProperties: [("k", "v")])))
        let event = try await log.waitFor("request") { if case .message = $0 { return true } else { return false } }
        guard case .message(let request) = event else { return }
        #expect(request.properties.responseTopic == "svc/reply")
        #expect(request.properties.correlationData == correlation)
        #expect(request.properties.contentType == "text/plain")
        #expect(request.properties.userProperties.first.map { $0 == ("k", "v") } == true)
        _ = try client.publish(MQTTMessage(
            topic: try #require(request.properties.responseTopic), payload: Array("{\"ok\":true}".utf8), qos: .atLeastOnce,
            properties: MQTTProperties(contentType: "application/json", payloadIsUTF8: true,
                                       correlationData: request.properties.correlationData, userProperties: [("status", "200")])))
        let replyEvent = try await requesterLog.waitFor("the reply") {
            if case .message(let message) = $0 { return message.topic == "svc/reply" } else { return false }
        }
        guard case .message(let reply) = replyEvent else { return }
        #expect(reply.payload == Array("{\"ok\":true}".utf8))
        #expect(reply.properties.correlationData == correlation)
        #expect(reply.properties.contentType == "application/json")
        #expect(reply.properties.payloadIsUTF8)
        #expect(reply.properties.userProperties.first.map { $0 == ("status", "200") } == true)
    }

    @Test("after the broker restarts the client reconnects by itself and its subscriptions are restored")
    func reconnectAndResubscribe() async throws {
        let broker = try MosquittoBroker()
        let (client, log) = try await connectedClient(port: broker.port, subscribing: ["again/#"])
        defer { client.stop() }
        broker.stop()
        _ = try await log.waitFor("disconnected") { if case .disconnected = $0 { return true } else { return false } }
        #expect(client.connectionState != .connected)
        try broker.start()
        // A bounded wait: the client retries every 0.5 s at most, so this is seconds even on a loaded machine.
        try await Wait.until(timeout: 30, "a second connect; the client's events: \(log.all); the broker's log:\n\(broker.log.suffix(1500))") {
            log.count(Self.isConnected) >= 2
        }
        // The broker has no persistence: only a resubscription can deliver this.
        try await MQTTTools.publish(port: broker.port, topic: "again/x", message: "after restart")
        _ = try await log.waitFor("message after restart") {
            if case .message(let message) = $0 { return message.topic == "again/x" } else { return false }
        }
    }

    @Test("a clean stop publishes the final message and disconnects without the will")
    func finalMessageAndWill() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "dev/status")
        let will = MQTTMessage(topic: "dev/status", payload: Array("offline-will".utf8), retain: true)
        let (client, _) = try await connectedClient(port: broker.port, will: will)
        client.stop(finalMessage: MQTTMessage(topic: "dev/status", payload: Array("offline-clean".utf8), retain: true))
        try await watcher.waitFor("the clean offline") { $0.payload == "offline-clean" }
        // A normal DISCONNECT: the broker must not also send the will. The broker handles the
        // DISCONNECT before a later marker message, so once the marker is here, so would the will be.
        try await MQTTTools.publish(port: broker.port, topic: "dev/status", message: "marker")
        try await watcher.waitFor("the marker") { $0.payload == "marker" }
        #expect(!watcher.messages.contains { $0.payload == "offline-will" })
    }
}
