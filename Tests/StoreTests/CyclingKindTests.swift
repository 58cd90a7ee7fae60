import Foundation
import Testing
import TestKit

@testable import Store

/// A bike's CSC notifications (0x2A5B) as a sample kind of its own (`CyclingKind`, table
/// `csc_record`): through a journal slot and the table, once however often they are replayed,
/// its table brought by its own migration, carried by a reopen and pruned by retention. The
/// values are the recorded Zwift Hub notifications of Tests/SensorBridgeTests/CSCRevolutionsTests
/// (github.com/Berg0162/simcline issue 7); the times are synthesised.
@Suite("Cycling CSC rows in the store")
struct CyclingKindTests {
    static let start: Int64 = 1_764_000_000_000  // 2025-11-24T16:00Z

    static let zwiftHub: [[UInt8]] = [
        [0x03, 0xa4, 0x00, 0x00, 0x00, 0x18, 0x4e, 0x40, 0x00, 0xa7, 0x4c],
        [0x03, 0xa6, 0x00, 0x00, 0x00, 0x72, 0x52, 0x41, 0x00, 0xc0, 0x50],
        [0x03, 0xa7, 0x00, 0x00, 0x00, 0xa6, 0x54, 0x42, 0x00, 0xc7, 0x54],
    ]

    static func row(_ second: Int64, sensor: String = "hub", origin: Int64? = nil, at start: Int64 = start) -> StoredCSCMeasurement {
        let time = start + second * 1000
        return StoredCSCMeasurement(
            sensor: sensor, timeMs: time, receivedMs: time + 7, raw: zwiftHub[Int(((second % 3) + 3) % 3)], origin: origin)
    }

    static func batch(_ rows: [StoredCSCMeasurement]) -> SampleBatch {
        var batch = SampleBatch()
        batch[CyclingKind.self] = rows
        return batch
    }

    static func stored(_ store: Store, fromMs: Int64 = 0, toMs: Int64 = .max) async throws -> [StoredCSCMeasurement] {
        try await store.read { reads in
            var rows: [StoredCSCMeasurement] = []
            try reads.forEach(CyclingKind.self, fromMs: fromMs, toMs: toMs) { rows.append($0) }
            return rows
        }
    }

    @Test("a CSC row, origin or not, comes back exactly from a journal slot, beside the other kinds")
    func slotRoundTrip() throws {
        var entry = JournalEntry(seq: 9, rows: Self.batch([Self.row(0), Self.row(1, origin: .min), Self.row(2, sensor: "other", origin: 42)]))
        entry.heartRates = [IngestJournalTests().heartRate(3)]
        let body = try #require(entry.encode())
        #expect(body.count == JournalEntry.bodySize)
        let decoded = try #require(JournalEntry.decode(body))
        #expect(decoded == entry)
        #expect(decoded.rows[CyclingKind.self].map(\.raw) == [Self.zwiftHub[0], Self.zwiftHub[1], Self.zwiftHub[2]])
        #expect(decoded.rows[CyclingKind.self].map(\.origin) == [nil, .min, 42])
    }

    @Test("CSC rows written with the journal on or off come back from the table in time order", arguments: [true, false])
    func tableRoundTrip(journal: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), journalFoldAfter: journal ? .seconds(3600) : nil))
        let rows = [Self.row(2), Self.row(0, origin: 5), Self.row(1)]
        let result = try await store.write(Self.batch(rows))
        #expect(result.inserted(CyclingKind.self) == 3)
        #expect(await store.journalStatus().pendingRows == (journal ? 3 : 0), "journal \(journal)")
        await store.foldForReaders()
        #expect(try await Self.stored(store) == [Self.row(0, origin: 5), Self.row(1), Self.row(2)])
        let raws = try SQLiteConnection(path: directory.file("k.db"), readOnly: true).scalarInt("SELECT count(*) FROM csc_record WHERE length(raw) = 11")
        #expect(raws == 3, "the value as received, 11 bytes")
    }

    @Test("a replay — the same sensor and time, or the same origin at another time — stores nothing, pending or folded", arguments: [true, false])
    func replays(journal: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), journalFoldAfter: journal ? .seconds(3600) : nil))
        let first = try await store.write(Self.batch([Self.row(0), Self.row(1, origin: 77)]))
        #expect(first.inserted(CyclingKind.self) == 2)
        // The same notification again by time; the one with an origin again, received later.
        var later = Self.row(1, origin: 77)
        later.timeMs += 30_000
        let pending = try await store.write(Self.batch([Self.row(0), later, Self.row(0)]))
        #expect(pending.inserted(CyclingKind.self) == 0, "journal \(journal): nothing new while pending")
        await store.foldForReaders()
        let folded = try await store.write(Self.batch([Self.row(0), later]))
        #expect(folded.inserted(CyclingKind.self) == 0, "journal \(journal): nothing new once folded")
        // The same origin from another sensor is its own notification.
        let other = try await store.write(Self.batch([Self.row(1, sensor: "other", origin: 77)]))
        #expect(other.inserted(CyclingKind.self) == 1)
        await store.foldForReaders()
        #expect(try await Self.stored(store).count == 3)
    }

    /// The kind's own migration's marks on a file: its counter, its table and its freshness columns.
    static func migrationMarks(_ path: String) throws -> (schema: Int64?, table: Int64?, columns: Int64?) {
        let db = try SQLiteConnection(path: path, readOnly: true)
        return (
            try db.scalarInt("SELECT value FROM agent_state WHERE key = 'schema_csc'"),
            try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'csc_record'"),
            try db.scalarInt("SELECT count(*) FROM pragma_table_info('day_aggregate') WHERE name IN ('built_csc_id', 'newest_csc_id')")
        )
    }

    @Test("a new file gets the CSC table by the kind's migration, once: a second open runs nothing again")
    func migrationOnNewFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        do {
            let store = try Store(path: path)
            try await store.write(Self.batch([Self.row(0)]))
        }
        let marks = try Self.migrationMarks(path)
        #expect(marks.schema == 1 && marks.table == 1 && marks.columns == 2, "\(marks)")
        // ALTER TABLE … ADD COLUMN would fail if it ran again: the open succeeding says it did not.
        let reopened = try Store(path: path)
        #expect(try await Self.stored(reopened) == [Self.row(0)])
        #expect(try Self.migrationMarks(path).schema == 1)
    }

    @Test("a file made before the kind (schema 1…latest, no csc_record) gains its table and columns, its rows and aggregates kept")
    func migrationOnOlderFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.db")
        do {
            let db = try SQLiteConnection(path: path)
            for migration in Schema.migrations { try db.execute(migration) }
            try db.execute("PRAGMA user_version = \(Schema.latestVersion)")
            try db.execute("INSERT INTO day_aggregate (date, tz, payload, final, updated_ms) VALUES ('2025-11-23', 'UTC', '{}', 1, 0)")
        }
        let before = try Self.migrationMarks(path)
        #expect(before.schema == nil && before.table == 0 && before.columns == 0, "the file predates the kind: \(before)")
        let store = try Store(path: path)
        let after = try Self.migrationMarks(path)
        #expect(after.schema == 1 && after.table == 1 && after.columns == 2, "\(after)")
        #expect(try await store.read { try $0.dayAggregate(date: "2025-11-23") }?.final == true, "the old aggregate kept")
        let written = try await store.write(Self.batch([Self.row(0), Self.row(1)]))
        #expect(written.inserted(CyclingKind.self) == 2)
        #expect(try await Self.stored(store).count == 2)
    }

    @Test("a reopen after the file was deleted carries the recent CSC rows, those stored after the last check too")
    func reopenCarries() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(path: path)
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        // Ten from the last minute, one from three days ago (past the 48 hours carried).
        try await store.write(Self.batch((0..<10).map { Self.row($0 - 60, at: nowMs) } + [Self.row(-3 * 86_400, at: nowMs)]))
        #expect(await store.checkFile() == nil)
        try await store.write(Self.batch([Self.row(-1, sensor: "late", at: nowMs)]))
        #expect(unlink(path) == 0)
        let report = try await store.reopen(after: .deleted)
        #expect(report.rowsCarried["csc_records"] == 11, "\(report.rowsCarried)")
        let carried = try await Self.stored(store)
        #expect(carried.count == 11 && carried.allSatisfy { $0.timeMs > nowMs - 86_400_000 })
        #expect(carried.contains(Self.row(-1, sensor: "late", at: nowMs)))
    }

    @Test("retention prunes CSC rows older than the cut, oldest first, and counts them as raw rows")
    func retention() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        try await store.write(Self.batch((0..<10).map { Self.row($0) }))
        #expect(try await store.oldestRawTimeMs() == Self.start, "the oldest raw row is a CSC row")
        #expect(try await store.pruneRawRows(beforeMs: Self.start + 4_000, limit: 3) == 3, "oldest first, at most the limit")
        #expect(try await store.pruneRawRows(beforeMs: Self.start + 4_000) == 1)
        #expect(try await store.pruneRawRows(beforeMs: Self.start + 4_000) == 0)
        #expect(try await Self.stored(store).map(\.timeMs) == (4..<10).map { Self.start + $0 * 1000 })
        #expect(try await store.oldestRawTimeMs() == Self.start + 4_000)
    }
}
