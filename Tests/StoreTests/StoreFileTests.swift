import Foundation
import Testing
import TestKit

@testable import Store

/// The store's file deleted or replaced under a running writer, against real files.
@Suite("Store file deleted or replaced")
struct StoreFileTests {
    static func heartRate(_ seconds: Int64, nowMs: Int64) -> StoredHeartRate {
        StoredHeartRate(
            sensor: "s", timeMs: nowMs - seconds * 1000, receivedMs: nowMs, bpm: 60, contact: 2, valid: true, raw: [0x16, 60],
            rrIntervals: [1024])
    }

    /// A store with three days of rows, two queued messages, a day aggregate, a workout and its
    /// shoes, a reader opened on it, and a row written after the last check; not yet unlinked.
    struct Filled {
        let directory: TemporaryDirectory
        let path: String
        let store: Store
        let reader: StoreReader
        let nowMs: Int64
        let seqs: [Int64]
    }

    static func filled() async throws -> Filled {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(path: path)
        let nowMs = Date().unixMs
        // Three days of rows, one a minute; two queued messages; a day aggregate.
        try await store.write(heartRates: (0..<(3 * 1440)).map { Self.heartRate(Int64($0) * 60, nowMs: nowMs) })
        let seqs = try await store.write(messages: ["a", "b"].map { topic in
            OutboxDraft(topic: "t/\(topic)", retain: false) { seq in Array("{\"seq\":\(seq)}".utf8) }
        }).seqs
        try await store.saveDayAggregate(
            StoredDayAggregate(date: "2026-11-20", tz: "UTC", payload: "{}", final: true, updatedMs: 1),
            builtUpTo: try await store.readStored { try $0.rowCursor() }, dayMs: (0, 0))
        // A workout and the shoes it is credited to: nothing in the raw rows could rebuild them.
        try await store.saveWorkout(StoredWorkout(
            id: "w1", startMs: 1, endMs: 2, sport: "run", source: "auto", finished: true, distanceM: 5000, record: #"{"id":"w1"}"#, updatedMs: 2))
        try await store.addGear(id: "pegasus", name: "Pegasus", startKm: 10, limitKm: 800, nowMs: 1)
        _ = try await store.credit(workoutID: "w1", to: "pegasus", km: 5, workoutEndMs: 2, nowMs: 3)
        let reader = try StoreReader(path: path)
        #expect(try reader.read { try $0.dayAggregate(date: "2026-11-20") } != nil)
        #expect(await store.checkFile() == nil)
        // Written after the last check, before anyone noticed: must not be lost either.
        try await store.write(heartRates: [Self.heartRate(-1, nowMs: nowMs)])
        return Filled(directory: directory, path: path, store: store, reader: reader, nowMs: nowMs, seqs: seqs)
    }

    @Test("an unlinked store file is noticed")
    func deletedIsNoticed() async throws {
        let filled = try await Self.filled()
        #expect(unlink(filled.path) == 0)
        #expect(await filled.store.checkFile() == .deleted)
    }

    @Test("an unlinked store file is reopened with seq, outbox, aggregates, workouts, shoes and recent rows carried")
    func deletedAndReopened() async throws {
        let filled = try await Self.filled()
        let (path, store, seqs) = (filled.path, filled.store, filled.seqs)
        #expect(unlink(path) == 0)
        let report = try await store.reopen(after: .deleted)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(await store.checkFile() == nil)
        #expect(report.outboxMessages == 2)
        #expect(report.dayAggregates == 1)
        #expect(try await store.readStored { try $0.workout(id: "w1") }?.version == 1)
        #expect(try await store.readStored { try $0.gear(id: "pegasus") }?.totalKm == 15)
        // 48 hours of one-a-minute rows (2880, or 2881 with the edge) and the one after the check.
        #expect((2881...2882).contains(report.heartRates), "\(report.heartRates)")
        // The counter goes on from where it was; the messages keep their seqs.
        let next = try await store.write(messages: [OutboxDraft(topic: "t/c", retain: false) { _ in [] }]).seqs
        #expect(next == [seqs[1] + 1])
        let pending = try await store.pendingMessages(afterID: 0, limit: 10).map(\.seq)
        #expect(pending == seqs + next)
        // Ids from before the reopen do not acknowledge messages in the new file.
        try await store.acknowledge(ids: [1, 2, 3], generation: 0)
        #expect(try await store.outboxSummary().pending == 3)
        #expect(try await store.integrityCheck() == "ok")
    }

    @Test("a reader opened before the store file was unlinked follows the path to the new file")
    func readerFollows() async throws {
        let filled = try await Self.filled()
        let (store, reader, nowMs) = (filled.store, filled.reader, filled.nowMs)
        #expect(unlink(filled.path) == 0)
        _ = try await store.reopen(after: .deleted)
        try await store.write(heartRates: [Self.heartRate(-2, nowMs: nowMs)])
        let count = try reader.read { reads in
            var rows = 0
            try reads.forEachHeartRate(fromMs: nowMs + 1, toMs: nowMs + 10_000) { _ in rows += 1 }
            return rows
        }
        #expect(count == 2, "the rows stored after the deletion, read through the old reader")
        #expect(try await store.integrityCheck() == "ok")
    }

    @Test("a -wal left at the path by the deleted file is not taken up by the new one, and survives the old connection's close")
    func staleWALNotReused() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(path: path)
        try await store.write(heartRates: [Self.heartRate(0, nowMs: 1_800_000_000_000)])
        #expect(await store.checkFile() == nil)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(unlink(path) == 0)  // the main file only, as `rm keepalive.db` does
        _ = try await store.reopen(after: .deleted)
        try await store.write(heartRates: [Self.heartRate(1, nowMs: 1_800_000_000_000)])
        // The new file is whole on its own: opened afresh, it passes the check and has its rows.
        let fresh = try SQLiteConnection(path: path, readOnly: true)
        #expect(try fresh.scalarText("PRAGMA integrity_check") == "ok")
        #expect(try fresh.scalarInt("SELECT count(*) FROM hr_sample") == 2)
    }
}
