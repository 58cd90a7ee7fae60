import Foundation
import Testing
import TestKit

@testable import Store

/// A workout saved with the messages that announce it (`write(…, workouts:)`): one transaction,
/// so a client told of the workout finds it in the store (a query for its day lists it), with the
/// ingest journal on or off.
@Suite("A workout saved with its messages")
struct WorkoutWithMessagesTests {
    static func workout(finished: Bool, distanceM: Double) -> StoredWorkout {
        StoredWorkout(
            id: "w1", startMs: 1_000, endMs: finished ? 601_000 : nil, sport: "run", source: "auto", finished: finished, distanceM: distanceM,
            record: #"{"id":"w1","distance_m":\#(distanceM)}"#, updatedMs: 2)
    }

    static func event(_ op: String) -> OutboxDraft {
        OutboxDraft(topic: "keepalive/d/event/workout", retain: false) { seq in Array("{\"seq\":\(seq),\"op\":\"\(op)\"}".utf8) }
    }

    @Test("the event and the workout are committed together, its version raised once it finishes", arguments: [false, true])
    func committedTogether(journal: Bool) async throws {
        let directory = try TemporaryDirectory("workout-messages")
        let path = directory.file("k.db")
        let store = try Store(Store.Configuration(path: path, journalFoldAfter: journal ? .seconds(3600) : nil))
        let heartRate = StoredHeartRate(sensor: "strap", timeMs: 1_000, receivedMs: 1_000, bpm: 60, contact: 2, valid: true, raw: [0x06, 60])
        try await store.write(heartRates: [heartRate], messages: [Self.event("started")], workouts: [Self.workout(finished: false, distanceM: 0)])
        let open = try #require(try await store.readStored { try $0.workout(id: "w1") }, "the workout announced as started")
        #expect(!open.finished && open.version == 0)
        #expect(try await store.outboxSummary().pending == 1)
        // What a query reads: a reader's snapshot of the file (finished workouts).
        let reader = try StoreReader(path: path)
        #expect(try reader.read { try $0.workouts(fromMs: 0, toMs: 2_000_000) }.isEmpty)

        try await store.write(messages: [Self.event("finished")], workouts: [Self.workout(finished: true, distanceM: 5_000)])
        let finished = try #require(try reader.read { try $0.workouts(fromMs: 0, toMs: 2_000_000) }.first)
        #expect(finished.finished && finished.distanceM == 5_000 && finished.version == 1, "\(finished)")
        #expect(try await store.outboxSummary().pending == 2)

        // The same again (a replay): nothing changes, not the version.
        try await store.write(workouts: [Self.workout(finished: true, distanceM: 5_000)])
        #expect(try await store.readStored { try $0.workout(id: "w1") }?.version == 1)
    }
}
