import Foundation
import Testing
import TestKit

@testable import Store

/// SD-card wear, page by page: what one 1 Hz commit appends to the WAL (docs/storage.md).
@Suite("WAL wear")
struct WALWearTests {
    /// The commits in a WAL file, each as the page numbers of its frames (the current salt only).
    static func commits(wal path: String) throws -> (pageSize: Int, commits: [[UInt32]]) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard bytes.count >= 32 else { return (0, []) }
        let pageSize = Int(u32(8))
        let salts = (u32(16), u32(20))
        var commits: [[UInt32]] = []
        var current: [UInt32] = []
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, (u32(offset + 8), u32(offset + 12)) == salts {
            current.append(u32(offset))
            if u32(offset + 4) != 0 {
                commits.append(current)
                current = []
            }
            offset += 24 + pageSize
        }
        return (pageSize, commits)
    }

    @Test("a new file has 512-byte pages: a 1 Hz commit (fix, notification with RR) appends about six small frames, not six 4 KiB ones")
    func framesPerCommit() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(path: path)
        let start: Int64 = 1_700_000_000_000
        for second in Int64(0)..<120 {
            let time = start + second * 1000
            try await store.write(
                fixes: [StoredFix(timeMs: time, receivedMs: time + 20, lat: 52.5, lon: 13.4, altHAE: 40, speed: 1.2, mode: 3, satellites: 9, timeSource: "gps")],
                heartRates: [StoredHeartRate(sensor: "strap", timeMs: time, receivedMs: time, bpm: 60, contact: 2, valid: true, raw: [0x16, 60, 0x11, 0x04], rrIntervals: [1041])])
        }
        let wal = try Self.commits(wal: path + "-wal")
        #expect(wal.pageSize == Store.pageSize)
        let recent = wal.commits.suffix(100)
        #expect(recent.count == 100)
        let frames = Double(recent.map(\.count).reduce(0, +)) / Double(recent.count)
        let bytes = frames * Double(24 + wal.pageSize)
        // Six b-trees (fix, its time index, hr_sample and its two indexes, rr_interval) and now and
        // then a new leaf with its parent and pointer-map page: measured 8.9 frames, ~4.8 KB.
        #expect(frames < 11, "frames per commit: \(frames)")
        #expect(bytes < 6_000, "WAL bytes per commit: \(bytes)")
    }

    /// 100 windows of a 1 Hz fix and notification written through the ingest journal, not folded yet.
    struct JournaledWindows {
        let directory: TemporaryDirectory
        let path: String
        let store: Store
        let start: Int64
        let commitsBefore: Int
    }

    static func journaledWindows() async throws -> JournaledWindows {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.db")
        let store = try Store(Store.Configuration(path: path, journalFoldAfter: .seconds(3600)))
        let start: Int64 = 1_700_000_000_000
        func write(_ second: Int64) async throws {
            let time = start + second * 1000
            try await store.write(
                fixes: [StoredFix(timeMs: time, receivedMs: time + 20, lat: 52.5, lon: 13.4, altHAE: 40, speed: 1.2, mode: 3, satellites: 9, timeSource: "gps")],
                heartRates: [StoredHeartRate(sensor: "strap", timeMs: time, receivedMs: time, bpm: 60, contact: 2, valid: true, raw: [0x16, 60, 0x11, 0x04], rrIntervals: [1041, 1002])])
        }
        try await write(0)
        let commitsBefore = try Self.commits(wal: path + "-wal").commits.count
        for second in Int64(1)..<100 { try await write(second) }
        return JournaledWindows(directory: directory, path: path, store: store, start: start, commitsBefore: commitsBefore)
    }

    @Test("with the ingest journal a 1 Hz window adds nothing to the WAL")
    func journalAddsNothingToTheWAL() async throws {
        let windows = try await Self.journaledWindows()
        #expect(try Self.commits(wal: windows.path + "-wal").commits.count == windows.commitsBefore, "no SQLite commit for a journaled window")
    }

    @Test("with the ingest journal each 1 Hz window is one checked slot of the ring file, in order")
    func journalSlotPerWindow() async throws {
        let windows = try await Self.journaledWindows()
        defer { withExtendedLifetime(windows) {} }
        let path = windows.path
        let ring = try #require(FileManager.default.contents(atPath: Store.journalPath(of: path)))
        #expect(ring.count == IngestRing.slots * JournalFile.slotSize)
        let slots = JournalFile.checkedBodies(Array(ring))
        #expect(slots.map(\.slot) == Array(0..<100), "each window its own slot, in order round the ring")
        #expect(slots.compactMap { JournalEntry.decode($0.body)?.seq } == Array(Int64(1)...100))
    }

    @Test("the fold of 100 journaled windows writes the tables' leaves, far fewer WAL frames than a commit each")
    func foldWritesTheLeaves() async throws {
        let windows = try await Self.journaledWindows()
        let (path, store, start) = (windows.path, windows.store, windows.start)
        await store.foldForReaders()
        let fold = try #require(try Self.commits(wal: path + "-wal").commits.last)
        // 100 fixes and 100 notifications with 200 RR intervals: the tables' new leaves, a few
        // parents, the agent_state page; far fewer pages than 100 commits × 6.
        #expect(fold.count < 150, "frames in the fold: \(fold.count)")
        #expect(try await store.read { try $0.fixes(fromMs: start, toMs: start + 100_000) }.count == 100)
        #expect(try await store.read { try $0.heartRates(fromMs: start, toMs: start + 100_000) }.map(\.rrIntervals) == Array(repeating: [1041, 1002], count: 100))
    }

    @Test("an existing file keeps its page size and SQLite's checkpoint threshold")
    func existingFileKeepsPageSize() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.db")
        do {
            let old = try SQLiteConnection(path: path)
            try old.execute("PRAGMA page_size = 4096")
            try old.execute("PRAGMA journal_mode = WAL")
            try old.execute("CREATE TABLE placeholder (x)")
        }
        do {
            let store = try Store(path: path)
            #expect(try await store.pragma("page_size") == 4096)
            #expect(try await store.pragma("wal_autocheckpoint") == 1000, "as often as before, never more")
        }
    }

    @Test("a new file gets the store's page size and checkpoints every 2 MiB")
    func newFileCheckpointsEvery2MiB() async throws {
        let directory = try TemporaryDirectory()
        let fresh = try Store(path: directory.file("new.db"))
        #expect(try await fresh.pragma("page_size") == Int64(Store.pageSize))
        #expect(try await fresh.pragma("wal_autocheckpoint") == Int64(Store.checkpointBytes / Store.pageSize))
    }
}

extension Store {
    /// A PRAGMA's value on the writer connection (tests only).
    func pragma(_ name: String) throws -> Int64? {
        let statement = try db.statement(sql: "PRAGMA \(name)")
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }
}
