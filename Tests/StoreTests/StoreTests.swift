import Foundation
import Testing
import TestKit

@testable import Store

@Suite("Store")
struct StoreTests {
    func fix(_ seconds: Int64, lat: Double = 52.5, lon: Double = 13.4) -> StoredFix {
        StoredFix(timeMs: seconds * 1000, receivedMs: seconds * 1000 + 30, lat: lat, lon: lon, mode: 3, timeSource: "gps")
    }

    func heartRate(_ seconds: Int64, bpm: Int = 60, rr: [Int] = []) -> StoredHeartRate {
        StoredHeartRate(
            sensor: "strap", timeMs: seconds * 1000, receivedMs: seconds * 1000, bpm: bpm, contact: 2, valid: true,
            raw: [0x16, UInt8(bpm)], rrIntervals: rr)
    }

    func draft(_ topic: String, supersedable: Bool = false) -> OutboxDraft {
        OutboxDraft(topic: topic, retain: true, supersedable: supersedable) { seq in Array("{\"seq\":\(seq)}".utf8) }
    }

    @Test("a fresh file, in folders that do not exist yet, gets the latest schema")
    func freshFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("nested/dir/k.db")
        _ = try Store(path: path)
        let db = try SQLiteConnection(path: path)
        #expect(try db.scalarInt("PRAGMA user_version") == Int64(Schema.latestVersion))
        #expect(try db.scalarText("PRAGMA journal_mode") == "wal")
    }

    @Test("reopening keeps data and seq")
    func freshAndReopen() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("nested/dir/k.db")
        do {
            let store = try Store(path: path)
            try await store.write(fixes: [fix(1000)], messages: [draft("t/a"), draft("t/b")])
        }
        let reopened = try Store(path: path)
        #expect(try await reopened.read { try $0.fixes(fromMs: 0, toMs: 2_000_000) }.count == 1)
        #expect(await reopened.currentSeq == 2)
        let next = try await reopened.write(messages: [draft("t/c")])
        #expect(next.seqs == [3])
        let db = try SQLiteConnection(path: path)
        #expect(try db.scalarInt("PRAGMA user_version") == Int64(Schema.latestVersion))
        #expect(try db.scalarText("PRAGMA journal_mode") == "wal")
    }

    @Test("an older file is upgraded")
    func migrations() async throws {
        let directory = try TemporaryDirectory()
        let old = directory.file("old.db")
        do {
            let db = try SQLiteConnection(path: old)
            try db.execute("PRAGMA user_version = 0")
        }
        _ = try Store(path: old)
        #expect(try SQLiteConnection(path: old).scalarInt("PRAGMA user_version") == Int64(Schema.latestVersion))

        // A version-1 file (as the first release wrote it) loses the unused RR time index and
        // gains the columns for a finished day's first and last fix, empty until it is republished,
        // and those of its freshness: current until a row of its day arrives.
        let first = directory.file("v1.db")
        do {
            let db = try SQLiteConnection(path: first)
            try db.execute(Schema.migrations[0])
            try db.execute("PRAGMA user_version = 1")
            try db.execute("INSERT INTO day_aggregate (date, tz, payload, final, updated_ms) VALUES ('2026-01-01', 'UTC', '{}', 1, 0)")
        }
        _ = try Store(path: first)
        let upgraded = try SQLiteConnection(path: first)
        #expect(try upgraded.scalarInt("PRAGMA user_version") == Int64(Schema.latestVersion))
        #expect(try upgraded.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'rr_interval_by_time'") == 0)
        let kept = try #require(try StoreReads(upgraded).dayAggregate(date: "2026-01-01"))
        #expect(kept.final && kept.firstFix == nil && kept.lastFix == nil && !kept.isStale)
    }

    @Test("a newer file is refused with a clear message")
    func newerRefused() async throws {
        let directory = try TemporaryDirectory()
        let newer = directory.file("newer.db")
        do {
            let db = try SQLiteConnection(path: newer)
            try db.execute("PRAGMA user_version = 999")
        }
        #expect {
            _ = try Store(path: newer)
        } throws: { error in
            "\(error)".contains("schema version 999")
        }
    }

    @Test("a replay of the same fixes and notifications stores nothing new")
    func idempotentIngest() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        let fixes = (0..<10).map { fix(1_000 + $0) }
        let samples = (0..<10).map { heartRate(1_000 + $0, rr: [1000, 1010]) }
        let first = try await store.write(fixes: fixes, heartRates: samples)
        #expect(first.fixesInserted == 10)
        #expect(first.heartRatesInserted == 10)
        let replay = try await store.write(fixes: fixes, heartRates: samples)
        #expect(replay.fixesInserted == 0)
        #expect(replay.heartRatesInserted == 0)
        let stored = try await store.read { try $0.heartRates(fromMs: 0, toMs: 10_000_000) }
        #expect(stored.count == 10)
        #expect(stored[0].rrIntervals == [1000, 1010])
    }

    @Test("RR intervals are back-dated from the notification time")
    func rrBackDating() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(path: path)
        try await store.write(heartRates: [heartRate(2_000, rr: [1024, 512])])
        let db = try SQLiteConnection(path: path)
        let statement = try db.statement("SELECT ts_ms FROM rr_interval ORDER BY position")
        var stamps: [Int64] = []
        while try statement.step() { stamps.append(statement.int64(0)) }
        // The newest interval ends at the notification; the one before it ends 500 ms earlier.
        #expect(stamps == [2_000_000 - 500, 2_000_000])
    }

    @Test("the outbox is read in order and a message leaves only when acknowledged")
    func outboxOrderAndAck() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(path: path)
        for index in 0..<5 { try await store.write(messages: [draft("t/\(index)")]) }
        let pending = try await store.pendingMessages(afterID: 0, limit: 10)
        #expect(pending.map(\.topic) == ["t/0", "t/1", "t/2", "t/3", "t/4"])
        #expect(pending.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(String(decoding: pending[2].payload, as: UTF8.self) == "{\"seq\":3}")
        try await store.acknowledge(ids: [pending[0].id, pending[1].id])
        // A restart (a new Store on the same file) sees exactly the unacknowledged ones.
        let restarted = try Store(path: path)
        #expect(try await restarted.pendingMessages(afterID: 0, limit: 10).map(\.topic) == ["t/2", "t/3", "t/4"])
        #expect(try await restarted.pendingMessages(afterID: pending[3].id, limit: 10).map(\.topic) == ["t/4"])
    }

    /// Two rounds of a location and a supersedable health/today, none delivered: the outbox then.
    func twoUndeliveredRounds() async throws -> [OutboxEntry] {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        try await store.write(messages: [draft("dev/location"), draft("dev/health/today", supersedable: true)])
        try await store.write(messages: [draft("dev/location"), draft("dev/health/today", supersedable: true)])
        return try await store.pendingMessages(afterID: 0, limit: 10)
    }

    @Test("a supersedable message replaces its undelivered predecessor")
    func superseding() async throws {
        let pending = try await twoUndeliveredRounds()
        #expect(pending.filter { $0.topic == "dev/health/today" }.count == 1)
        #expect(pending.last?.seq == 4)
    }

    @Test("a message that is not supersedable is never dropped")
    func othersNeverDropped() async throws {
        let pending = try await twoUndeliveredRounds()
        #expect(pending.map(\.topic) == ["dev/location", "dev/location", "dev/health/today"])
    }

    @Test("a refused message is set aside, out of the queue but kept")
    func setAside() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        try await store.write(messages: [draft("a"), draft("b")])
        let first = try #require(try await store.pendingMessages(afterID: 0, limit: 1).first)
        try await store.setAside(id: first.id, reason: "v5 reason code 135")
        #expect(try await store.pendingMessages(afterID: 0, limit: 10).map(\.topic) == ["b"])
        let summary = try await store.outboxSummary()
        #expect(summary.pending == 1)
        #expect(summary.setAside == 1)
    }

    @Test("a damaged file is moved aside, kept, and a new one created")
    func corruptFileRecovery() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        do {
            let store = try Store(path: path)
            try await store.write(fixes: (0..<2000).map { fix(Int64($0)) })
        }
        // Overwrite pages in the middle of the file with garbage, as a failing SD card might.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 8192)
        handle.write(Data(repeating: 0xA5, count: 16384))
        try handle.close()
        let recovered = try Store(path: path)
        let aside = try #require(recovered.movedAsideCorruptFile)
        #expect(aside.hasPrefix(path + ".corrupt-"))
        #expect(FileManager.default.fileExists(atPath: aside))
        #expect(try await recovered.read { try $0.fixes(fromMs: 0, toMs: .max) }.isEmpty)
        #expect(try await recovered.integrityCheck() == "ok")
    }

    /// A file whose fix table's root page is damaged (the outbox is not), in `directory`.
    func damagedFixTable(in directory: TemporaryDirectory) async throws -> String {
        let path = directory.file("k.db")
        do {
            let store = try Store(path: path)
            #expect(!store.needsFullCheck, "a small file is checked whole at start")
            try await store.write(fixes: (0..<2000).map { fix(Int64($0)) })
            try await store.write(messages: [draft("a")])
        }
        // Damage only the fix table's root page: what a start-up check of the small tables misses.
        let root = try #require(try SQLiteConnection(path: path, readOnly: true).scalarInt("SELECT rootpage FROM sqlite_master WHERE name = 'fix'"))
        let pageSize = try #require(try SQLiteConnection(path: path, readOnly: true).scalarInt("PRAGMA page_size"))
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(root - 1) * UInt64(pageSize))
        handle.write(Data(repeating: 0xA5, count: Int(pageSize)))
        try handle.close()
        return path
    }

    @Test("a file too large to check whole at start: its small tables are checked at start, the whole later")
    func backgroundCheck() async throws {
        let directory = try TemporaryDirectory()
        let path = try await damagedFixTable(in: directory)
        let store = try Store(Store.Configuration(path: path, fullCheckMaxBytes: 0))
        #expect(store.movedAsideCorruptFile == nil)
        #expect(store.needsFullCheck)
        #expect(try await store.pendingMessages(afterID: 0, limit: 10).map(\.topic) == ["a"], "the outbox is usable")
        #expect(try Store.fullCheck(path: path) != nil, "the full check finds the damage")
    }

    @Test("damage the later full check finds is recorded, and the next start moves the file aside")
    func damageFoundLaterMovesFileAside() async throws {
        let directory = try TemporaryDirectory()
        let path = try await damagedFixTable(in: directory)
        do {
            let store = try Store(Store.Configuration(path: path, fullCheckMaxBytes: 0))
            #expect(store.needsFullCheck)
            let finding = try #require(try Store.fullCheck(path: path), "the full check finds the damage")
            try Store.markDamaged(path: path, finding: finding)
        }
        let replaced = try Store(Store.Configuration(path: path, fullCheckMaxBytes: 0))
        let aside = try #require(replaced.movedAsideCorruptFile)
        #expect(FileManager.default.fileExists(atPath: aside))
        #expect(!FileManager.default.fileExists(atPath: path + ".damaged"), "the record is consumed")
        #expect(try await replaced.read { try $0.fixes(fromMs: 0, toMs: .max) }.isEmpty)
        #expect(try Store.fullCheck(path: path) == nil)
    }

    @Test("retention prunes raw rows in chunks and keeps aggregates")
    func retention() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        try await store.write(fixes: (0..<5000).map { fix(Int64($0)) }, heartRates: (0..<5000).map { heartRate(Int64($0)) })
        try await store.saveDayAggregate(
            StoredDayAggregate(date: "1970-01-01", tz: "UTC", payload: "{}", final: true, updatedMs: 1),
            builtUpTo: try await store.readStored { try $0.rowCursor() }, dayMs: (0, 86_400_000))
        var rounds = 0
        while try await store.pruneRawRows(beforeMs: 4_000_000, limit: 1000) > 0 { rounds += 1 }
        #expect(rounds == 4)
        #expect(try await store.read { try $0.fixes(fromMs: 0, toMs: .max) }.count == 1000)
        #expect(try await store.read { try $0.heartRates(fromMs: 0, toMs: .max) }.count == 1000)
        #expect(try await store.readStored { try $0.dayAggregate(date: "1970-01-01") } != nil)
        #expect(try await store.oldestRawTimeMs() == 4_000_000)
    }

    @Test("a stored day aggregate is stale exactly while rows of its day were stored after it was computed")
    func aggregateFreshness() async throws {
        let directory = try TemporaryDirectory()
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let store = try Store(Store.Configuration(path: directory.file("k.db"), dayTimeZone: berlin))
        let day = try #require(LocalDay("2026-10-25", timeZone: berlin))  // 25 h long
        let (start, end) = day.boundsMs
        func sample(_ ms: Int64) -> StoredHeartRate {
            StoredHeartRate(sensor: "s", timeMs: ms, receivedMs: ms, bpm: 60, contact: 2, valid: true, raw: [0x06, 60], rrIntervals: [])
        }
        func location(_ ms: Int64) -> StoredFix { StoredFix(timeMs: ms, receivedMs: ms, lat: 1, lon: 2, mode: 3, timeSource: "gps") }
        func save(upTo cursor: RowCursor) async throws {
            try await store.saveDayAggregate(
                StoredDayAggregate(date: "2026-10-25", tz: "Europe/Berlin", payload: "{}", final: true, updatedMs: 0),
                builtUpTo: cursor, dayMs: (start, end))
        }
        func isStale() async throws -> Bool { try #require(try await store.readStored { try $0.dayAggregate(date: "2026-10-25") }).isStale }

        try await store.write(fixes: [location(start)], heartRates: [sample(start), sample(end - 1)])
        try await save(upTo: try await store.readStored { try $0.rowCursor() })
        #expect(try await isStale() == false)
        // Rows of other days, a replayed duplicate: still current.
        try await store.write(fixes: [location(end)], heartRates: [sample(start - 1), sample(end), sample(start)])
        #expect(try await isStale() == false)
        // A late heart-rate row (the 25th hour), then a late fix: stale until computed again.
        try await store.write(heartRates: [sample(end - 3_600_000)])
        #expect(try await isStale())
        try await store.markDayAggregateCurrent(date: "2026-10-25", builtUpTo: try await store.readStored { try $0.rowCursor() })
        #expect(try await isStale() == false)
        try await store.write(fixes: [location(start + 1000)])
        #expect(try await isStale())
        // Computed up to a cursor taken before a row arrived: stale as soon as it is saved.
        let before = try await store.readStored { try $0.rowCursor() }
        try await store.write(heartRates: [sample(start + 5000)])
        try await save(upTo: before)
        #expect(try await isStale())
        try await save(upTo: try await store.readStored { try $0.rowCursor() })
        #expect(try await isStale() == false)
        // Retention emptied the tables, so row ids start again below the aggregate's mark.
        while try await store.pruneRawRows(beforeMs: .max) > 0 {}
        try await store.write(heartRates: [sample(start + 7000)])
        #expect(try await isStale())
    }

    @Test("local days have their real length across DST", arguments: [
        ("America/New_York", "2026-03-08", 23.0), ("America/New_York", "2026-11-01", 25.0),
        ("Europe/Berlin", "2026-03-29", 23.0), ("Europe/Berlin", "2026-10-25", 25.0), ("Europe/Berlin", "2026-07-01", 24.0),
    ])
    func dstDays(zone: String, date: String, hours: Double) throws {
        let timeZone = try #require(TimeZone(identifier: zone))
        let day = try #require(LocalDay(date, timeZone: timeZone))
        let bounds = day.boundsMs
        #expect(Double(bounds.end - bounds.start) / 3_600_000 == hours)
        #expect(day.description == date)
        #expect(LocalDay(containing: day.start, timeZone: timeZone) == day)
        #expect(LocalDay(containing: day.end.addingTimeInterval(-0.001), timeZone: timeZone) == day)
    }

    @Test("a day query returns exactly the rows of that local day")
    func dayQuery() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let day = try #require(LocalDay("2026-10-25", timeZone: berlin))
        let (start, end) = day.boundsMs
        let stamps = [start - 1000, start, start + 3_600_000, end - 1000, end]
        try await store.write(fixes: stamps.map { StoredFix(timeMs: $0, receivedMs: $0, lat: 1, lon: 2, mode: 2, timeSource: "gps") })
        let fixes = try await store.read { try $0.fixes(fromMs: start, toMs: end) }
        #expect(fixes.map(\.timeMs) == [start, start + 3_600_000, end - 1000])
    }

    @Test("strict dates", arguments: ["2026-02-30", "2026-13-01", "26-01-01", "2026-1-01", "2026-01-01T00", "", "abcd-ef-gh", "２０２６-01-01"])
    func invalidDates(text: String) {
        #expect(LocalDay(text, timeZone: TimeZone(identifier: "UTC")!) == nil)
    }
}
