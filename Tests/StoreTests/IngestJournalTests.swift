import Foundation
import Testing
import TestKit

@testable import Store

/// The ingest journal (docs/storage.md): windows wait in a ring of 512-byte slots in
/// `<store>-ingest` and are folded into the tables; nothing is lost or doubled on the way, whatever comes in between.
@Suite("Ingest journal")
struct IngestJournalTests {
    static let start: Int64 = 1_764_000_000_000  // 2025-11-24T16:00Z

    func fix(_ second: Int64) -> StoredFix {
        let time = Self.start + second * 1000
        return StoredFix(
            timeMs: time, receivedMs: time + 20, lat: 52.5 + Double(second) * 1e-5, lon: 13.4, altHAE: 40, altMSL: nil, speed: 1.2,
            track: 90, climb: nil, eph: 3.5, epv: nil, mode: 3, satellites: 9, timeSource: "gps")
    }

    func heartRate(_ second: Int64, sensor: String = "AA:BB:CC:DD:EE:FF") -> StoredHeartRate {
        let time = Self.start + second * 1000
        return StoredHeartRate(
            sensor: sensor, timeMs: time, receivedMs: time + 5, bpm: 60 + Int(second % 40), contact: 2, energyKJ: second == 3 ? 12 : nil,
            valid: second != 4, raw: [0x16, UInt8(60 + second % 40), 0x11, 0x04], rrIntervals: [1041, 998])
    }

    /// A store with the journal on and its fold an hour away: the tests fold when they mean to.
    struct JournaledStore {
        let directory: TemporaryDirectory
        let path: String
        let store: Store

        init() throws {
            directory = try TemporaryDirectory()
            path = directory.file("k.db")
            store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        }
    }

    func stepWindow(_ second: Int64) -> StoredStepRecord {
        let time = Self.start + second * 1000
        return StoredStepRecord(sensor: "strap", firstSampleMs: time, lastSampleMs: time + 59_980, receivedMs: time + 60_000, coveredMs: 60_000, steps: 88)
    }

    @Test("a window's rows come back from its slot exactly")
    func codecRoundTrip() throws {
        var entry = JournalEntry(seq: 42, fixes: [fix(1), fix(2)], heartRates: [heartRate(3), heartRate(4)], steps: [stepWindow(5)])
        entry.steps.append(StoredStepRecord(sensor: "pod", timeMs: Self.start, receivedMs: Self.start + 3, rsc: [0x02, 0x80, 0x02, 0xAA]))
        entry.steps.append(StoredStepRecord(sensor: "pod", timeMs: Self.start + 1, receivedMs: Self.start + 4, rsc: [0x02, 0x80, 0x02, 0xAB], origin: -7))
        entry.heartRates[1].origin = .min
        let body = try #require(entry.encode())
        #expect(body.count == JournalEntry.bodySize)
        #expect(JournalEntry.decode(body) == entry)
        #expect(JournalEntry.decode([1, 2, 3]) == nil)
    }

    @Test("a replay named by its origin (stored at its receive time, at another time) is stored once, journal on or off", arguments: [true, false])
    func replayByOrigin(journal: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), journalFoldAfter: journal ? .seconds(3600) : nil))
        var first = heartRate(1)
        first.origin = 99
        var copy = heartRate(2)  // the same notification, given a later receive time
        copy.origin = 99
        var other = heartRate(3, sensor: "other")  // the same origin from another sensor is its own
        other.origin = 99
        var pod = StoredStepRecord(sensor: "pod", timeMs: Self.start, receivedMs: Self.start, rsc: [0x02, 0x80, 0x02, 0xAA], origin: 5)
        let firstWrite = try await store.write(heartRates: [first], steps: [pod])
        pod.timeMs += 1000
        let again = try await store.write(heartRates: [copy, other], steps: [pod])
        await store.foldForReaders()
        let replayAfterFold = try await store.write(heartRates: [copy], steps: [pod])
        #expect(firstWrite.heartRatesInserted == 1 && firstWrite.stepRecordsInserted == 1)
        #expect(again.heartRatesInserted == 1 && again.stepRecordsInserted == 0, "only the other sensor's is new")
        #expect(replayAfterFold.heartRatesInserted == 0 && replayAfterFold.stepRecordsInserted == 0)
        #expect(try await store.read { try $0.heartRates(fromMs: 0, toMs: .max) }.map(\.sensor).sorted() == ["AA:BB:CC:DD:EE:FF", "other"])
    }

    @Test("a window too large for a slot does not encode")
    func tooLargeDoesNotEncode() throws {
        // A 10 Hz strap's window fits; a backlog's hundred notifications do not.
        #expect(JournalEntry(seq: 1, fixes: [fix(1)], heartRates: (0..<10).map { heartRate($0) }).encode() != nil)
        #expect(JournalEntry(seq: 1, fixes: [fix(1)], heartRates: (0..<100).map { heartRate($0) }).encode() == nil)
    }

    @Test("rows in the journal are read by the writer (it folds first), by another connection only once folded")
    func readersSeeFoldedRows() async throws {
        let opened = try JournaledStore()
        defer { withExtendedLifetime(opened) {} }
        let (path, store) = (opened.path, opened.store)
        for second in Int64(0)..<10 { try await store.write(fixes: [fix(second)], heartRates: [heartRate(second)]) }
        let reader = try StoreReader(path: path)
        #expect(try reader.read { try $0.rows(after: RowCursor(), limit: 100) }.fixes.count == 0)
        #expect(await store.journalStatus().pendingWindows == 10)
        await store.foldForReaders()
        let rows = try reader.read { try $0.rows(after: RowCursor(), limit: 100) }
        #expect(rows.fixes == (0..<10).map { fix($0) })
        #expect(rows.heartRates == (0..<10).map { heartRate($0) })
        #expect(await store.journalStatus() == JournalStatus(enabled: true, pendingWindows: 0, pendingRows: 0, folds: 1, foldedRows: 20))
    }

    @Test("a replay is recognised whether its rows are still in the journal or already folded")
    func duplicates() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), journalFoldAfter: .seconds(3600)))
        let first = try await store.write(fixes: [fix(1), fix(1)], heartRates: [heartRate(1)], steps: [stepWindow(1)])
        #expect((first.fixesInserted, first.heartRatesInserted, first.stepRecordsInserted) == (1, 1, 1))
        let pending = try await store.write(fixes: [fix(1)], heartRates: [heartRate(1)], steps: [stepWindow(1)])
        #expect((pending.fixesInserted, pending.heartRatesInserted, pending.stepRecordsInserted) == (0, 0, 0))
        await store.foldForReaders()
        let folded = try await store.write(fixes: [fix(1), fix(2)], heartRates: [heartRate(1)], steps: [stepWindow(1)])
        #expect((folded.fixesInserted, folded.heartRatesInserted, folded.stepRecordsInserted) == (1, 0, 0))
        #expect(try await store.read { try $0.fixes(fromMs: Self.start, toMs: Self.start + 10_000) }.count == 2)
        #expect(try await store.read { try $0.heartRates(fromMs: Self.start, toMs: Self.start + 10_000) }.count == 1)
        #expect(try await store.read { try $0.stepRecords(fromMs: Self.start, toMs: Self.start + 10_000) }.count == 1)
    }

    /// A store that went round its ring more than once and was dropped without a fold, as a SIGKILL leaves it.
    func crashedRing(in directory: TemporaryDirectory) async throws -> String {
        let path = directory.file("k.db")
        do {
            let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
            // Round the ring more than once: folds when full, the rest left unfolded.
            for second in Int64(0)..<Int64(IngestRing.slots + 30) {
                try await store.write(fixes: [fix(second)], heartRates: [heartRate(second)])
            }
            // The 129th found the ring full: folded, and written to the tables itself.
            #expect(await store.journalStatus().pendingWindows == 29)
            // Dropped without a fold, as a SIGKILL leaves it: the windows committed, not folded.
        }
        return path
    }

    @Test("what a crash leaves in the ring is folded at the next start")
    func crashLeftoversFolded() async throws {
        let directory = try TemporaryDirectory()
        let path = try await crashedRing(in: directory)
        let reopened = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        let count = Int64(IngestRing.slots + 30)
        #expect(try await reopened.read { try $0.fixes(fromMs: Self.start, toMs: .max) } == (0..<count).map { fix($0) })
    }

    @Test("the ring goes on after what a crash left in it is folded")
    func crashLeftovers() async throws {
        let directory = try TemporaryDirectory()
        let path = try await crashedRing(in: directory)
        let reopened = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        let count = Int64(IngestRing.slots + 30)
        try await reopened.write(fixes: [fix(count)], heartRates: [heartRate(count)])
        #expect(try await reopened.read { try $0.fixes(fromMs: Self.start, toMs: .max) } == (0...count).map { fix($0) })
        #expect(try await reopened.read { try $0.heartRates(fromMs: Self.start, toMs: .max) }.count == Int(count) + 1)
    }

    @Test("what a crash leaves in the ring is folded once: a later start folds nothing again")
    func crashLeftoversFoldedOnce() async throws {
        let directory = try TemporaryDirectory()
        let path = try await crashedRing(in: directory)
        let count = Int64(IngestRing.slots + 30)
        let reopened = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        try await reopened.write(fixes: [fix(count)], heartRates: [heartRate(count)])
        // Folded as a read would: the third store below cannot take the ring while this one has it.
        await reopened.foldForReaders()
        // A third start finds nothing new to fold: the marker moved on.
        let third = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        #expect(try await third.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.count == Int(count) + 1)
        #expect(await third.journalStatus().folds == 0)
    }

    @Test("a window for a day with a stored aggregate goes to the tables at once and makes it stale in the same commit")
    func lateRowsForAnAggregatedDay() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), dayTimeZone: TimeZone(identifier: "UTC")!, journalFoldAfter: .seconds(3600)))
        let day = LocalDay(containing: Date(unixMs: Self.start), timeZone: TimeZone(identifier: "UTC")!)
        try await store.saveDayAggregate(
            StoredDayAggregate(date: day.description, tz: "UTC", payload: "{}", final: true, updatedMs: 1),
            builtUpTo: try await store.readStored { try $0.rowCursor() }, dayMs: day.boundsMs)
        try await store.write(fixes: [fix(1)])
        #expect(await store.journalStatus().pendingWindows == 0)
        #expect(try await store.readStored { try $0.dayAggregate(date: day.description) }?.isStale == true)
        // The next day has no aggregate: its rows wait in the journal.
        try await store.write(fixes: [fix(86_400)])
        #expect(await store.journalStatus().pendingWindows == 1)
    }

    @Test("a window too large for a slot folds the journal and goes to the tables in order")
    func largeWindowGoesDirect() async throws {
        let opened = try JournaledStore()
        defer { withExtendedLifetime(opened) {} }
        let (path, store) = (opened.path, opened.store)
        try await store.write(fixes: [fix(0)])
        try await store.write(heartRates: (1..<200).map { heartRate($0) })
        #expect(await store.journalStatus().pendingWindows == 0)
        let rows = try StoreReader(path: path).read { try $0.rows(after: RowCursor(), limit: 1000) }
        #expect(rows.fixes.count == 1 && rows.heartRates.count == 199)
    }

    @Test("a fold that is due happens in the next write, or with no write when the writer asks")
    func foldWhenDue() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), journalFoldAfter: .milliseconds(1)))
        try await store.write(fixes: [fix(0)])
        #expect(await store.journalStatus().pendingWindows == 1)
        try await Task.sleep(for: .milliseconds(5))
        try await store.write(fixes: [fix(1)])
        #expect(await store.journalStatus() == JournalStatus(enabled: true, pendingWindows: 0, pendingRows: 0, folds: 1, foldedRows: 1))
        let quiet = try Store(Store.Configuration(path: directory.file("q.db"), journalFoldAfter: .milliseconds(1)))
        try await quiet.write(fixes: [fix(0)])
        try await Task.sleep(for: .milliseconds(5))
        await quiet.foldJournalIfDue()
        #expect(await quiet.journalStatus().pendingWindows == 0)
    }

    @Test("with the journal on, acknowledged messages leave the outbox with the next fold: never sent again, not counted as pending")
    func acknowledgementsWaitForTheFold() async throws {
        let opened = try JournaledStore()
        defer { withExtendedLifetime(opened) {} }
        let (path, store) = (opened.path, opened.store)
        let drafts = (0..<5).map { index in OutboxDraft(topic: "t/\(index)", retain: false) { seq in Array("{\"seq\":\(seq)}".utf8) } }
        try await store.write(fixes: [fix(0)], messages: drafts)
        let queued = try await store.pendingMessages(afterID: 0, limit: 10)
        try await store.acknowledge(ids: queued.prefix(3).map(\.id))
        #expect(try await store.pendingMessages(afterID: 0, limit: 10).map(\.topic) == ["t/3", "t/4"])
        // A drain starting again from the oldest gets a full page past the acknowledged rows.
        #expect(try await store.pendingMessages(afterID: 0, limit: 2).map(\.topic) == ["t/3", "t/4"])
        #expect(try await store.outboxSummary().pending == 2)
        let rows = { try SQLiteConnection(path: path, readOnly: true).scalarInt("SELECT count(*) FROM outbox") }
        #expect(try rows() == 5, "still in the file until the fold")
        await store.foldForReaders()
        #expect(try rows() == 2)
        #expect(try await store.outboxSummary().pending == 2)
    }

    @Test("messages a previous run left are deleted as soon as they are acknowledged, not at the fold")
    func acknowledgementsOfAnEarlierRun() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        do {
            let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
            try await store.write(fixes: [fix(0)], messages: [OutboxDraft(topic: "t/old", retain: false) { _ in [] }])
        }
        let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        try await store.write(fixes: [fix(1)], messages: [OutboxDraft(topic: "t/new", retain: false) { _ in [] }])
        let queued = try await store.pendingMessages(afterID: 0, limit: 10)
        #expect(queued.map(\.topic) == ["t/old", "t/new"])
        let topics = { () throws -> [String] in
            let db = try SQLiteConnection(path: path, readOnly: true)
            let statement = try db.statement("SELECT topic FROM outbox ORDER BY id")
            var topics: [String] = []
            while try statement.step() { topics.append(statement.text(0)) }
            return topics
        }
        try await store.acknowledge(ids: [queued[1].id])
        #expect(try topics() == ["t/old", "t/new"], "this run's message waits for the fold")
        try await store.acknowledge(ids: [queued[0].id])
        #expect(try topics().isEmpty, "the earlier run's is deleted at once, with what was waiting")
    }

    /// A store whose ring holds one window per second of `seconds`, dropped without a fold (as a
    /// SIGKILL leaves it), its ring file then changed by `damage`; opened again, and one more
    /// window written at `seconds.upperBound`. The fix times it then has, the ring's size, and
    /// how many slots the start found damaged (it logs them).
    func reopenedAfterDamagingTheRing(_ seconds: Range<Int64>, _ damage: (FileHandle) throws -> Void) async throws -> (times: [Int64], ringSize: Int?, damaged: Int) {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        do {
            let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
            for second in seconds { try await store.write(fixes: [fix(second)]) }
        }
        let ring = Store.journalPath(of: path)
        let handle = try #require(FileHandle(forUpdatingAtPath: ring))
        try damage(handle)
        try handle.close()
        let damaged = try JournalFile(path: ring, slots: IngestRing.slots, syncsEachWrite: false).read().damaged
        let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        try await store.write(fixes: [fix(seconds.upperBound)])
        let times = try await store.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.map { ($0.timeMs - Self.start) / 1000 }
        return (times, try FileManager.default.attributesOfItem(atPath: ring)[.size] as? Int, damaged)
    }

    /// Ten windows, slot 3's last bytes as a write cut short would leave them (its check no longer holds), reopened.
    func reopenedWithATornSlot() async throws -> (times: [Int64], ringSize: Int?, damaged: Int) {
        try await reopenedAfterDamagingTheRing(0..<10) { handle in
            try handle.seek(toOffset: UInt64(3 * JournalFile.slotSize + 300))
            handle.write(Data(repeating: 0xFF, count: 2000))
        }
    }

    @Test("a slot that fails its check (torn by a power cut, or damaged) is skipped at the next start")
    func tornSlotIsSkipped() async throws {
        let reopened = try await reopenedWithATornSlot()
        #expect(!reopened.times.contains(3))
        #expect(reopened.damaged == 1, "the torn slot is counted (and logged); never-written slots are not")
    }

    @Test("the windows beside a slot that fails its check are folded at the next start")
    func windowsBesideATornSlotFolded() async throws {
        let reopened = try await reopenedWithATornSlot()
        #expect(reopened.times == [0, 1, 2] + Array(4...10))
    }

    @Test("a ring file of another size (another version's, a copy cut short) is read, its windows folded, then made again")
    func ringOfAnotherSize() async throws {
        let reopened = try await reopenedAfterDamagingTheRing(0..<5) { try $0.truncate(atOffset: UInt64(3 * JournalFile.slotSize)) }
        #expect(reopened.times == [0, 1, 2, 5])
        #expect(reopened.ringSize == IngestRing.slots * JournalFile.slotSize)
    }

    /// A store whose ring file was deleted after its first window, then written, folded and written again.
    func ringDeletedWhileRunning() async throws -> (opened: JournaledStore, ring: String) {
        let opened = try JournaledStore()
        let ring = Store.journalPath(of: opened.path)
        try await opened.store.write(fixes: [fix(0)])
        try FileManager.default.removeItem(atPath: ring)
        try await opened.store.write(fixes: [fix(1)])
        await opened.store.foldForReaders()
        try await opened.store.write(fixes: [fix(2)])
        return (opened, ring)
    }

    @Test("a ring file deleted while the store runs is made again after the next fold")
    func ringDeletedIsMadeAgain() async throws {
        let (opened, ring) = try await ringDeletedWhileRunning()
        #expect(FileManager.default.fileExists(atPath: ring))
        #expect(try Store.unfoldedJournalEntries(storePath: opened.path).flatMap(\.fixes) == [fix(2)], "the new ring has the window written after the fold")
    }

    @Test("a ring file deleted while the store runs loses nothing")
    func ringDeletedLosesNothing() async throws {
        let (opened, _) = try await ringDeletedWhileRunning()
        #expect(try await opened.store.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.count == 3)
    }

    /// A schema-7 file (its ring a table: five windows, the first two folded), opened and written once.
    func schema7Opened(in directory: TemporaryDirectory) async throws -> (path: String, store: Store) {
        let path = directory.file("k.db")
        do { _ = try Store(path: path) }
        do {
            // The file as schema 7 left it: five windows in the table, the first two folded.
            let db = try SQLiteConnection(path: path)
            try db.execute("CREATE TABLE ingest_journal (slot INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            for seq in Int64(1)...5 {
                let body = try #require(JournalEntry(seq: seq, fixes: [fix(seq)], heartRates: [heartRate(seq)]).encode())
                try db.statement("INSERT INTO ingest_journal (slot, body) VALUES (?, ?)").bind(.integer(seq - 1), .blob(Array(body.prefix(464)))).run()
            }
            // And without what schema 10 added to the outbox (schema 9's table is made IF NOT EXISTS),
            // nor schema 13's origins.
            try db.execute("""
                DROP INDEX hr_sample_origin; DROP INDEX step_record_origin;
                ALTER TABLE hr_sample DROP COLUMN origin; ALTER TABLE step_record DROP COLUMN origin;
                DROP INDEX outbox_pending; DROP INDEX outbox_supersedable; DROP INDEX outbox_set_aside;
                ALTER TABLE outbox DROP COLUMN delivered;
                CREATE INDEX outbox_pending ON outbox (id) WHERE rejected_reason IS NULL;
                CREATE INDEX outbox_supersedable ON outbox (topic) WHERE supersedable = 1;
                """)
            try db.execute("UPDATE agent_state SET value = 2 WHERE key = 'journal_folded'; PRAGMA user_version = 7")
        }
        let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        try await store.write(fixes: [fix(6)])
        return (path, store)
    }

    @Test("a schema-7 file's ring, a table then, is folded at the first start and the table dropped")
    func schema7TableIsFoldedAndDropped() async throws {
        let directory = try TemporaryDirectory()
        let (path, store) = try await schema7Opened(in: directory)
        #expect(try await store.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.map(\.timeMs) == [3, 4, 5, 6].map { Self.start + $0 * 1000 })
        #expect(try await store.read { try $0.heartRates(fromMs: Self.start, toMs: .max) }.map(\.timeMs) == [3, 4, 5].map { Self.start + $0 * 1000 })
        let db = try SQLiteConnection(path: path, readOnly: true)
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'ingest_journal'") == 0)
        #expect(try db.scalarInt("PRAGMA user_version") == Int64(Schema.latestVersion))
    }

    @Test("the seqs of a schema-7 file's ring go on after its table's")
    func schema7SeqsGoOn() async throws {
        let directory = try TemporaryDirectory()
        let (path, store) = try await schema7Opened(in: directory)
        defer { withExtendedLifetime(store) {} }
        let ring = try #require(FileManager.default.contents(atPath: Store.journalPath(of: path)))
        #expect(JournalFile.checkedBodies(Array(ring)).compactMap { JournalEntry.decode($0.body)?.seq } == [6], "the ring's seqs continue after the table's")
    }

    @Test("a second store on the same file cannot take the ring (another agent): its windows go to the tables, nothing is lost")
    func secondWriterWritesTheTables() async throws {
        let opened = try JournaledStore()
        try await opened.store.write(fixes: [fix(0)])
        let second = try Store(Store.Configuration(path: opened.path, journalFoldAfter: .seconds(3600)))
        try await second.write(fixes: [fix(1)])
        #expect(await second.journalStatus().enabled == false)
        #expect(await opened.store.journalStatus().pendingWindows == 1)
        #expect(try await second.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.map(\.timeMs) == [Self.start + 1000], "the other's window is still in its ring")
        await opened.store.foldForReaders()
        #expect(try await second.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.count == 2)
    }

    /// A journaled store with one window, then made read-only, and a message that cannot be queued.
    func readOnlyAfterAWindow() async throws -> (opened: JournaledStore, draft: OutboxDraft) {
        let opened = try JournaledStore()
        try await opened.store.write(fixes: [fix(0)])
        try await opened.store.executeForTest("PRAGMA query_only = ON")
        return (opened, OutboxDraft(topic: "t/location", retain: false) { _ in [] })
    }

    @Test("a window stored in the ring whose messages cannot be queued (read-only file): the messages fail")
    func messagesFail() async throws {
        let (opened, draft) = try await readOnlyAfterAWindow()
        let store = opened.store
        await #expect(throws: MessagesNotQueued.self) { try await store.write(fixes: [fix(1)], messages: [draft]) }
        try await store.executeForTest("PRAGMA query_only = OFF")
        #expect(try await store.pendingMessages(afterID: 0, limit: 10).isEmpty)
    }

    @Test("a window stored in the ring whose messages cannot be queued (read-only file) is reported stored, not replayed")
    func messagesFailAfterTheRing() async throws {
        let (opened, draft) = try await readOnlyAfterAWindow()
        let store = opened.store
        _ = try? await store.write(fixes: [fix(1)], messages: [draft])
        do {
            try await store.write(fixes: [fix(2)], messages: [draft])
        } catch let partial as MessagesNotQueued {
            #expect(partial.stored.fixesInserted == 1, "the fix is in the ring")
        }
        try await store.executeForTest("PRAGMA query_only = OFF")
        #expect(try await store.pendingMessages(afterID: 0, limit: 10).isEmpty)
        #expect(try await store.read { try $0.fixes(fromMs: Self.start, toMs: .max) }.map(\.timeMs) == [0, 1, 2].map { Self.start + $0 * 1000 })
    }
}

extension Store {
    /// SQL on the writer connection (tests only).
    func executeForTest(_ sql: String) throws { try db.execute(sql) }
}
