import Foundation
import Testing
import TestKit

@Suite("Fault: broker outages", .enabled(if: FaultSuite.enabled, FaultSuite.reason))
struct BrokerOutageFaults {
    static let interval = 5
    static let outageS = 60
    static let outages = 5

    @Test("a 60 s broker outage, 5 times in a row: every location slot delivered, in order, seq increasing")
    func fiveOutages() async throws {
        let rig = try await OutageRig(interval: Self.interval, locationsFirst: 2)
        var backlogDelays: [Double] = []
        for round in 1...Self.outages {
            try await rig.brokerDown()
            let down = Int(Date().timeIntervalSince1970)
            // The outage itself: time passing with no broker, not a wait for an event.
            try await Task.sleep(for: .seconds(Self.outageS))
            try rig.broker.start()
            let restarted = Date()
            // The backlog is in once the consumer has a slot from after the restart.
            try await Wait.until(timeout: 60, "outage \(round): a location from after the restart") {
                OutageRig.deduplicated(rig.consumer.messages).contains { $0.createdAt > Int(restarted.timeIntervalSince1970) }
            }
            backlogDelays.append(Date().timeIntervalSince(restarted))
            let slots = OutageRig.deduplicated(rig.consumer.messages).map(\.createdAt)
            let during = slots.filter { $0 > down && $0 < Int(restarted.timeIntervalSince1970) }
            #expect(during.count >= Self.outageS / Self.interval - 1, "outage \(round): only \(during.count) slots from the outage arrived")
        }
        let locations = OutageRig.deduplicated(rig.consumer.messages)
        let seqs = locations.map(\.seq)
        #expect(seqs == seqs.sorted(), "seq must increase in arrival order")
        let gaps = OutageRig.gaps(in: locations.map(\.createdAt), interval: Self.interval)
        #expect(gaps.isEmpty, "slots not contiguous: \(gaps)")
        FaultSuite.report(
            "broker outage 60 s × 5",
            "\(locations.count) slots, 0 missing, \(gaps.count) gaps, seq increasing; backlog in after restart: max \(FaultSuite.format(backlogDelays.max() ?? 0)) s")
        #expect(rig.agent.stop() == 0)
    }
}
