import Bus
import Foundation
import Logging
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import Store

/// The outbox drain's acknowledgements against a real mosquitto and a real store file: a PUBACK
/// that arrives while a batch of earlier ones is being written to the store must not be lost.
/// Losing one leaves the message pending in the file behind the drain, which does not send it
/// again before the next connection: the outbox that "never drained" of the Home Assistant
/// lifecycle test and the kill test (docs/testing.md).
@Suite("Outbox acknowledgements")
struct OutboxAcknowledgementTests {
    /// The client's PUBACKs as they arrive, handed to the drain when the test says.
    final class Acknowledgements: Sendable {
        private let events = Mutex<[(session: UInt64, mid: Int32, reasonCode: Int32)]>([])
        func append(_ event: (session: UInt64, mid: Int32, reasonCode: Int32)) { events.withLock { $0.append(event) } }
        var all: [(session: UInt64, mid: Int32, reasonCode: Int32)] { events.withLock { $0 } }
    }

    @Test("PUBACKs handled while a flush waits for the store leave the outbox with the next flush")
    func acknowledgedDuringAFlush() async throws {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/acks/#")
        defer { watcher.stop() }
        let directory = try TemporaryDirectory("acks")
        // The journal off: an acknowledgement is a transaction of its own (an fsync), which the
        // flush awaits.
        let store = try Store(path: directory.file("k.db"))
        let count = 10
        try await store.write(messages: (0..<count).map { index in
            OutboxDraft(topic: "keepalive/acks/\(index)", retain: false) { seq in Array("{\"seq\":\(seq)}".utf8) }
        })
        let client = MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: broker.port, clientID: "acks-\(broker.port)", reconnectMinS: 0.1, reconnectMaxS: 0.5),
            logger: Logger(label: "test"))
        let drain = OutboxDrain(store: store, client: client, maxInflight: 20, useProperties: true, logger: Logger(label: "test"))
        // The connection's events as BusService hands them on, except the PUBACKs: kept here.
        let acknowledgements = Acknowledgements()
        let events = Task {
            for await event in client.events {
                switch event {
                case .connected(let session, let receiveMaximum): await drain.connected(session: session, receiveMaximum: receiveMaximum)
                case .disconnected: await drain.disconnected()
                case .published(let session, let mid, let reasonCode): acknowledgements.append((session, mid, reasonCode))
                case .message: break
                }
            }
        }
        client.start()
        defer {
            client.stop()
            events.cancel()
        }
        // 60 s: the whole suite's other tests can hold both cooperative threads for seconds (one
        // run here saw 9 of the 10 PUBACKs in 10 s).
        try await Wait.until(timeout: 60, "the broker's PUBACKs for the \(count) queued messages (\(acknowledgements.all.count) so far)") {
            acknowledgements.all.count >= count
        }
        try #require(acknowledgements.all.count == count, "one PUBACK per message on one connection: \(acknowledgements.all)")
        _ = try await watcher.waitFor(count: count, timeout: 60, "the \(count) messages at the broker's subscriber") { $0.topic.hasPrefix("keepalive/acks/") }
        let first = acknowledgements.all[0]
        await drain.published(session: first.session, mid: first.mid, reasonCode: first.reasonCode)

        // The other nine are handled while the flush of the first waits for the store.
        await drain.flushWhileHandling(Array(acknowledgements.all.dropFirst()))
        #expect(await drain.inflightCount == 0, "every PUBACK matched a message in flight")

        // The next periodic flush.
        await drain.flushAcknowledgements()
        let pending = try await store.outboxSummary().pending
        #expect(
            pending == 0,
            "\(pending) of the \(count) messages the broker acknowledged are still pending in the outbox (the drain does not send them again on this connection)")
    }
}

extension OutboxDrain {
    /// A flush of the acknowledgements so far with `acknowledgements` handled while it waits for
    /// the store, as BusService's periodic flush runs beside the connection's events. Isolated to
    /// the drain: the handlers are queued on it before the flush starts, so they run as soon as
    /// the flush has taken its batch and awaits the store, before it resumes.
    fileprivate func flushWhileHandling(_ acknowledgements: [(session: UInt64, mid: Int32, reasonCode: Int32)]) async {
        let handlers = acknowledgements.map { acknowledgement in
            Task { await self.published(session: acknowledgement.session, mid: acknowledgement.mid, reasonCode: acknowledgement.reasonCode) }
        }
        await flushAcknowledgements()
        for handler in handlers { await handler.value }
    }
}
