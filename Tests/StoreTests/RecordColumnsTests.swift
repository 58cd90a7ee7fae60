import Foundation
import Testing
import TestKit

@testable import Store

/// Fixes, notifications and step records are read by column name from one column list per
/// record type: every field has to come back from every query that reads whole records.
@Suite("Record columns")
struct RecordColumnsTests {
    // Every optional field set, with values no other field has, next to records with none set.
    static let fullFix = StoredFix(
        timeMs: 1_000_000, receivedMs: 1_000_040, lat: 52.51, lon: 13.41, altHAE: 81.5, altMSL: 40.25, speed: 1.5, track: 91,
        climb: -0.5, eph: 4.5, epv: 7.5, mode: 3, satellites: 11, timeSource: "gps")
    static let laterFix = StoredFix(timeMs: 1_004_000, receivedMs: 1_004_010, lat: -33.9, lon: 151.2, mode: 2, timeSource: "system")
    static let strap = StoredHeartRate(
        sensor: "strap", timeMs: 1_000_500, receivedMs: 1_000_600, bpm: 72, contact: 2, energyKJ: 17, valid: true,
        raw: [0x19, 72, 17, 0, 0x11, 0x04, 0xDE, 0x03], rrIntervals: [1041, 990])
    static let band = StoredHeartRate(sensor: "band", timeMs: 1_000_500, receivedMs: 1_000_700, bpm: 0, contact: 1, valid: false, raw: [0x00, 0])
    static let rsc = StoredStepRecord(sensor: "pod", timeMs: 1_000_200, receivedMs: 1_000_250, rsc: [0x02, 0x00, 0x01, 0xB4])
    static let window = StoredStepRecord(
        sensor: "strap", firstSampleMs: 1_000_000, lastSampleMs: 1_059_980, receivedMs: 1_060_000, coveredMs: 59_980, steps: 101)

    /// Stored later-first, so an order by time and an order by id differ.
    func filledStore(_ path: String) async throws -> Store {
        let store = try Store(path: path)
        try await store.write(fixes: [Self.laterFix, Self.fullFix], heartRates: [Self.strap, Self.band], steps: [Self.rsc, Self.window])
        return store
    }

    @Test("by time, after a cursor, through a reader, first and last, first per slot: every field of every record")
    func everyReadPath() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try await filledStore(path)

        #expect(try await store.read { try $0.fixes(fromMs: 0, toMs: 2_000_000) } == [Self.fullFix, Self.laterFix])
        #expect(try await store.read { try $0.heartRates(fromMs: 0, toMs: 2_000_000) } == [Self.band, Self.strap])
        #expect(try await store.read { try $0.stepRecords(fromMs: 0, toMs: 2_000_000) } == [Self.window, Self.rsc])

        let new = try await store.readStored { try $0.rows(after: RowCursor(), limit: 10) }
        #expect(new.fixes == [Self.laterFix, Self.fullFix])
        #expect(new.heartRates == [Self.strap, Self.band])
        #expect(new.steps == [Self.rsc, Self.window])
        #expect(new.cursor == RowCursor(fixID: 2, heartRateID: 2, stepID: 2))
        let rest = try await store.readStored { try $0.rows(after: RowCursor(fixID: 1, heartRateID: 1, stepID: 1), limit: 10) }
        #expect(rest.fixes == [Self.fullFix] && rest.heartRates == [Self.band] && rest.steps == [Self.window])

        let reader = try StoreReader(path: path)
        try reader.read { reads in
            var fixes: [StoredFix] = []
            try reads.forEachFix(fromMs: 0, toMs: 2_000_000) { fixes.append($0) }
            #expect(fixes == [Self.fullFix, Self.laterFix])
            var heartRates: [StoredHeartRate] = []
            try reads.forEachHeartRate(fromMs: 0, toMs: 2_000_000) { heartRates.append($0) }
            #expect(heartRates == [Self.band, Self.strap])
            var steps: [StoredStepRecord] = []
            try reads.forEachStepRecord(fromMs: 0, toMs: 2_000_000) { steps.append($0) }
            #expect(steps == [Self.window, Self.rsc])
            #expect(try reads.rows(after: RowCursor(), limit: 10).heartRates == [Self.strap, Self.band])

            let ends = try reads.fixEnds(fromMs: 0, toMs: 2_000_000)
            #expect(ends.first == Self.fullFix && ends.last == Self.laterFix)
            // One slot holds both: its first fix is the earlier one although it has the larger id.
            var slots: [StoredFix] = []
            try reads.firstFixPerSlot(fromMs: 0, toMs: 2_000_000, slotMs: 10_000) { slots.append($0) }
            #expect(slots == [Self.fullFix])
            slots = []
            try reads.firstFixPerSlot(fromMs: 0, toMs: 2_000_000, slotMs: 1000) { slots.append($0) }
            #expect(slots == [Self.fullFix, Self.laterFix])
        }
    }

    @Test("a reopen copies every field: by time, by id, and step records")
    func reopenCopy() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try await filledStore(path)
        #expect(unlink(path) == 0)
        #expect(await store.checkFile() == .deleted)
        // 1970: the rows are recent for a clock 48 hours after them.
        let report = try await store.reopen(after: .deleted, now: Date(timeIntervalSince1970: 2 * 86_400))
        #expect(report.fixes == 2 && report.heartRates == 2 && report.stepRecords == 2)
        #expect(try await store.read { try $0.fixes(fromMs: 0, toMs: 2_000_000) } == [Self.fullFix, Self.laterFix])
        #expect(try await store.read { try $0.heartRates(fromMs: 0, toMs: 2_000_000) } == [Self.band, Self.strap])
        #expect(try await store.read { try $0.stepRecords(fromMs: 0, toMs: 2_000_000) } == [Self.window, Self.rsc])
    }

    /// A read-only connection to a filled store's file, kept in `directory`.
    func filledConnection(in directory: TemporaryDirectory) async throws -> SQLiteConnection {
        let path = directory.file("k.db")
        _ = try await filledStore(path)
        return try SQLiteConnection(path: path, readOnly: true)
    }

    @Test("columns are found by name, in any order")
    func byName() async throws {
        let directory = try TemporaryDirectory()
        let db = try await filledConnection(in: directory)
        let reversed = StoredFix.selection.split(separator: ", ").reversed().joined(separator: ", ")
        let shuffled = try db.statement(sql: "SELECT 'x' AS unrelated, \(reversed) FROM fix ORDER BY ts_ms")
        let columns = try shuffled.layout(StoredFix.Columns.self)
        var fixes: [StoredFix] = []
        while try shuffled.step() { fixes.append(columns.fix(shuffled)) }
        #expect(fixes == [Self.fullFix, Self.laterFix])
    }

    @Test("a column missing from a query that reads whole records fails it")
    func missingColumnFails() async throws {
        let directory = try TemporaryDirectory()
        let db = try await filledConnection(in: directory)
        let partial = try db.statement(sql: "SELECT ts_ms, lat, lon FROM fix")
        #expect(throws: SQLiteError.self) { try partial.layout(StoredFix.Columns.self) }
    }

    @Test("SQL composed at run time is prepared once")
    func composedSQLPreparedOnce() async throws {
        let directory = try TemporaryDirectory()
        let db = try await filledConnection(in: directory)
        let first = try db.statement(sql: StoredStepRecord.afterID)
        #expect(try db.statement(sql: StoredStepRecord.afterID) === first)
    }
}
