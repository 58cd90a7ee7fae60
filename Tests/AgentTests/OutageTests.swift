import Foundation
import Testing
import TestKit

@testable import Store

/// Nothing is lost while the broker is away, nor when the agent dies meanwhile.
@Suite("Broker outages", .serialized)
struct OutageTests {
    static let interval = 2

    /// A persistent broker, gpsd replaying a capture, a persistent-session consumer of the
    /// device's locations, and the agent publishing one every `interval` seconds, already flowing.
    struct Setup {
        let broker: MosquittoBroker
        let gps: GPSFake
        let consumer: MQTTSubscriber
        let agent: AgentProcess

        init(locationsFirst: Int) async throws {
            broker = try MosquittoBroker(persistence: true)
            gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.2)
            consumer = try await MQTTSubscriber(
                port: broker.port, filter: "keepalive/testpi/location", clientID: "consumer-\(UInt16.random(in: 0...9999))",
                persistent: true)
            agent = try AgentProcess(
                brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
                extraConfig: "[schedule]\nlocation_interval_s = \(OutageTests.interval)\nstatus_interval_s = 60\n",
                environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
            _ = try await consumer.waitFor(count: locationsFirst, timeout: 30, "\(locationsFirst) locations before the outage") { _ in true }
        }

        /// Stops the broker and waits until the agent has noticed.
        func brokerDown() async throws {
            broker.stop()
            try await agent.process!.waitForLine(containing: "MQTT connection lost", timeout: 10)
        }
    }

    /// Location messages as a consumer dedupes them: by seq, first arrival kept, in arrival order.
    static func deduplicated(_ messages: [MQTTSubscriber.Message]) -> [(seq: Int, createdAt: Int)] {
        var seen = Set<Int>()
        var result: [(Int, Int)] = []
        for message in messages {
            // Slot messages only (trigger "t"); the one right after the first fix is off the grid.
            guard let json = message.json, json["t"] as? String == "t", let seq = json["seq"] as? Int,
                  let created = json["created_at"] as? Int else { continue }
            if seen.insert(seq).inserted { result.append((seq, created)) }
        }
        return result
    }

    @Test("a 30 s broker outage: a persistent consumer gets every location slot, in order, seq increasing")
    func outage() async throws {
        let setup = try await Setup(locationsFirst: 3)
        let (broker, consumer) = (setup.broker, setup.consumer)
        try await setup.brokerDown()
        let outageStart = Date()
        // The outage itself: 30 s of the agent publishing into its outbox with no broker.
        try await Task.sleep(for: .seconds(30))
        try broker.start()
        let restartedAt = Int(Date().timeIntervalSince1970)
        try await Wait.until(timeout: 40, "a location from after the restart; consumer has \(consumer.messages.count)") {
            Self.deduplicated(consumer.messages).contains { $0.createdAt > restartedAt + Self.interval }
        }

        let locations = Self.deduplicated(consumer.messages)
        let seqs = locations.map(\.seq)
        #expect(seqs == seqs.sorted(), "seq must increase in arrival order: \(seqs)")
        let slots = locations.map(\.createdAt)
        // Every slot from the first to the last, exactly once: none lost, none made up.
        let gaps = zip(slots, slots.dropFirst()).filter { $1 - $0 != Self.interval }
        #expect(gaps.isEmpty, "slots not contiguous: \(gaps) in \(slots)")
        let duringOutage = slots.filter { $0 > Int(outageStart.timeIntervalSince1970) && $0 < restartedAt }
        #expect(duringOutage.count >= 30 / Self.interval - 1, "only \(duringOutage.count) slots from the outage arrived")
    }

    @Test("broker down, agent SIGKILLed with messages queued, broker up, agent restarted: all of them arrive")
    func crashWhileDisconnected() async throws {
        let setup = try await Setup(locationsFirst: 1)
        let (broker, consumer, agent) = (setup.broker, setup.consumer, setup.agent)
        try await setup.brokerDown()

        let pendingLocations = {
            let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
            let statement = try db.statement("SELECT seq FROM outbox WHERE topic = 'keepalive/testpi/location' ORDER BY id")
            var seqs: [Int] = []
            while try statement.step() { seqs.append(statement.int(0)) }
            return seqs
        }
        try await Wait.until(timeout: 30, "three locations queued in the outbox") { try pendingLocations().count >= 3 }
        agent.kill9()
        let queued = try pendingLocations()

        try broker.start()
        try agent.start()
        try await Wait.until(timeout: 30, "every queued location (\(queued)) at the consumer; agent:\n\(agent.log.suffix(1500))\nconsumer:\n\(consumer.log.suffix(1500))") {
            // Every location counts here, the one right after the first fix too.
            let received = Set(consumer.messages.compactMap { $0.json?["seq"] as? Int })
            return queued.allSatisfy(received.contains)
        }
        let seqs = Self.deduplicated(consumer.messages).map(\.seq)
        #expect(seqs == seqs.sorted(), "\(seqs)")
    }
}
