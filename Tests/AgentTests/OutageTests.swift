import Foundation
import Testing
import TestKit

@testable import Store

/// Nothing is lost while the broker is away, nor when the agent dies meanwhile.
@Suite("Broker outages", .serialized)
struct OutageTests {
    static let interval = 2

    @Test("a 30 s broker outage: a persistent consumer gets every location slot, in order, seq increasing")
    func outage() async throws {
        let setup = try await OutageRig(interval: Self.interval, locationsFirst: 3)
        let (broker, consumer) = (setup.broker, setup.consumer)
        try await setup.brokerDown()
        let outageStart = Date()
        // The outage itself: 30 s of the agent publishing into its outbox with no broker.
        try await Task.sleep(for: .seconds(30))
        try broker.start()
        let restartedAt = Int(Date().timeIntervalSince1970)
        try await Wait.until(timeout: 40, "a location from after the restart; consumer has \(consumer.messages.count)") {
            OutageRig.deduplicated(consumer.messages).contains { $0.createdAt > restartedAt + Self.interval }
        }

        let locations = OutageRig.deduplicated(consumer.messages)
        let seqs = locations.map(\.seq)
        #expect(seqs == seqs.sorted(), "seq must increase in arrival order: \(seqs)")
        let slots = locations.map(\.createdAt)
        // Every slot from the first to the last, exactly once: none lost, none made up.
        let gaps = OutageRig.gaps(in: slots, interval: Self.interval)
        #expect(gaps.isEmpty, "slots not contiguous: \(gaps) in \(slots)")
        let duringOutage = slots.filter { $0 > Int(outageStart.timeIntervalSince1970) && $0 < restartedAt }
        #expect(duringOutage.count >= 30 / Self.interval - 1, "only \(duringOutage.count) slots from the outage arrived")
    }

    @Test("broker down, agent SIGKILLed with messages queued, broker up, agent restarted: all of them arrive")
    func crashWhileDisconnected() async throws {
        let setup = try await OutageRig(interval: Self.interval, locationsFirst: 1)
        let (broker, consumer, agent) = (setup.broker, setup.consumer, setup.agent)
        try await setup.brokerDown()

        let pendingLocations = {
            let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
            let statement = try db.statement("SELECT seq FROM outbox WHERE topic = 'keepalive/testpi/location' AND delivered = 0 ORDER BY id")
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
        let seqs = OutageRig.deduplicated(consumer.messages).map(\.seq)
        #expect(seqs == seqs.sorted(), "\(seqs)")
    }
}
