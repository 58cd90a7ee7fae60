import Foundation
import Logging
import Supervision

/// The agent's SQLite store: sensor samples of every kind (Kinds/: a `SampleKind` each — fixes,
/// heart-rate notifications, step records — listed in `SampleKinds`), daily aggregates, agent
/// state and the durable outbox, in one WAL-mode file.
///
/// An actor: one writer connection, used by one task at a time. A message in the outbox is
/// committed together with the data it reports, or after it when the data went to the ingest
/// journal — never before it.
///
/// This file holds its state and opening; each concern is an extension in a file of its own
/// (StoreOverviewTests fails when one is missing here):
/// - Store+Integrity: a damaged file found at start or in the background, moved aside.
/// - Store+File: the path no longer naming the open file (deleted, replaced), and reopening.
/// - Store+CarryOverWorkouts: workouts, shoes and credits carried into a replaced file.
/// - Store+Ingest: sensor data in, one journal slot or one transaction per write.
/// - Store+Journal: the ingest journal's windows folded into the tables.
/// - Store+Outbox: the durable outbox and its `seq` counter.
/// - Store+Published: acknowledged messages kept for resend requests.
/// - Store+HeldMessages: messages the file could not take, queued by the next write that can.
/// - Store+Reads: reading on the writer connection, `read`/`readStored` (StoreReading), and the day aggregates saved.
/// - Store+Workouts, Store+Gear: workouts, and the shoes they are credited to.
/// - Store+DayFolds, Store+SleepEpochs, Store+SleepNights: day folds, sleep epochs and nights kept.
/// - Store+Retention: raw rows pruned oldest first to keep the file within its disk.
///
/// Readers have a connection of their own: StoreReader (read-only, for queries and the command
/// line while the agent runs), StoreReader+JSON (SQLite's `json_valid`), StoreReader+Published
/// (a range of seqs for a resend request).
///
/// Both read one way (StoreReading.swift, `read { reads in … }`), through the queries of
/// StoreReads (StoreReads.swift and its extensions); SQLiteConnection is the generic C wrapper.
public actor Store {
    public nonisolated let path: String
    /// Set when the file was found damaged at start and moved aside to this path.
    public nonisolated let movedAsideCorruptFile: String?
    /// True when the file was too large to check whole at start (only its small tables were):
    /// the owner runs `Store.fullCheck` in the background.
    public nonisolated let needsFullCheck: Bool

    /// Files up to this size get a full `quick_check` at start (a couple of seconds on an SD
    /// card); a larger one would hold up start-up for minutes — past systemd's start timeout
    /// with a year of data — so only its small tables are checked then.
    public static let defaultFullCheckMaxBytes: Int64 = 128 << 20

    /// The page size of a new file (an existing file keeps its own; docs/storage.md says how to
    /// convert one). Each commit appends one WAL frame (24 bytes + a page) per page it changes —
    /// a leaf of every table and index it touches, six at 1 Hz GPS + heart rate — and the kernel
    /// writes whole 4 KiB pages: with 4 KiB pages that is ~26 KB per commit, with 512-byte pages
    /// ~5 KB (measured: 29.8 KiB vs 8.7 KiB written per commit, figures.md). The file is ~10 %
    /// larger and a day's scan ~10 % slower.
    public static let pageSize = 512

    /// The WAL is checkpointed into the file once it holds this much (`wal_autocheckpoint` is
    /// counted in pages): a page changed every second is copied once per checkpoint, not once
    /// per commit. About 8 minutes at 1 Hz GPS + heart rate with 512-byte pages.
    static let checkpointBytes = 2 << 20

    /// `wal_autocheckpoint` for a file's page size: `checkpointBytes`, but never more often than
    /// SQLite's default of 1000 pages (a file with 4 KiB pages keeps checkpointing as before).
    static func checkpointPages(pageSize: Int) -> Int { max(checkpointBytes / max(pageSize, 512), 1000) }

    /// The writer connection; replaced by `reopen` when the file was deleted or replaced.
    var db: SQLiteConnection
    /// The domain reads on the writer connection (StoreReads.swift).
    var reads: StoreReads { StoreReads(db) }
    let logger: Logger
    let synchronous: Synchronous
    /// The owner's clock: the outbox's stamps, the name a damaged file is kept under, what a
    /// reopen carries over.
    let clock: any WallClock
    var seq: Int64
    /// Messages the file could not take (disk full), with their seq: queued by the next write
    /// that succeeds, before anything else (see Store+HeldMessages.swift).
    var held: [OutboxEntry] = []
    /// The file this connection has open, and the rows it held at the last check that found the
    /// path still pointing at it (see Store+File.swift).
    var identity: FileIdentity
    var verifiedCursor = RowCursor()
    /// Goes up with every `reopen`: outbox ids handed out before belong to the old file.
    public internal(set) var fileGeneration = 0
    /// The zone that cuts rows into the local days of `day_aggregate` (`[device] timezone`).
    let dayTimeZone: TimeZone
    /// The ingest journal's ring: its file, slots, pending windows and counters (IngestRing.swift;
    /// Store+Journal.swift folds it).
    var ring: IngestRing
    /// Outbox rows the broker acknowledged, deleted (or marked delivered) with the next fold rather
    /// than in a commit of their own (with the journal on; Store+Outbox.swift). Never sent again meanwhile.
    var acknowledgedUndeleted: Set<Int64> = []
    /// The newest outbox row of the file when it was opened: rows up to it were queued by an
    /// earlier run (or carried over by `reopen`).
    var outboxLeftByLastRun: Int64
    /// Acknowledged rows are kept, marked delivered, for resend requests (Store+Published.swift).
    let keepsPublished: Bool
    /// The newest outbox row `pendingMessages` has handed out: it may be on its way to the broker
    /// or acknowledged and not yet reported, so a kept store never supersedes it (Store+Published).
    var handedOutMaxID: Int64 = 0

    /// Opens (creating it if need be), checks and migrates the file `configuration.path`.
    public init(_ configuration: Configuration, logger: Logger = Logger(label: "keepalive.store")) throws {
        path = configuration.path
        clock = configuration.clock
        keepsPublished = configuration.keepPublished
        ring = IngestRing(foldAfter: configuration.journalFoldAfter, syncsEachWrite: configuration.synchronous != .normal)
        self.logger = logger
        dayTimeZone = configuration.dayTimeZone
        synchronous = configuration.synchronous
        let opened = try Self.open(
            path: path, synchronous: synchronous, fullCheckMaxBytes: configuration.fullCheckMaxBytes, now: clock.now(), logger: logger)
        db = opened.connection
        seq = opened.seq
        outboxLeftByLastRun = opened.outboxMaxID
        movedAsideCorruptFile = opened.movedAside
        needsFullCheck = !opened.checkedWhole
        identity = FileIdentity(path: path)
    }

    /// The file at `path` with every other setting at its default (`Configuration`).
    public init(path: String) throws {
        try self.init(Configuration(path: path))
    }

    /// What `open` found and made.
    struct Opened {
        var connection: SQLiteConnection
        var seq: Int64
        var outboxMaxID: Int64
        var checkedWhole: Bool
        var movedAside: String?
    }

    /// Opens (creating it and its directory if need be), checks and migrates the file at `path`;
    /// a damaged file is moved aside and a new one started.
    static func open(path: String, synchronous: Synchronous, fullCheckMaxBytes: Int64, now: Date, logger: Logger) throws -> Opened {
        try ensureDirectory(of: path)
        var movedAside: String?
        var connection: SQLiteConnection
        var checkedWhole = true
        do {
            if let finding = damageFinding(path) {
                throw SQLiteError(.corrupt, message: "found by the last full check: \(finding)")
            }
            (connection, checkedWhole) = try openChecked(path: path, synchronous: synchronous, fullCheckMaxBytes: fullCheckMaxBytes)
        } catch let error as SQLiteError where error.isCorruption {
            let aside = try moveAside(path, now: now)
            try? FileManager.default.removeItem(atPath: damageMarker(path))
            logger.error("store file is damaged; moved aside, starting a new one", metadata: ["moved_to": "\(aside)", "error": "\(error)"])
            movedAside = aside
            do {
                (connection, checkedWhole) = try openChecked(path: path, synchronous: synchronous, fullCheckMaxBytes: fullCheckMaxBytes)
            } catch let error as SQLiteError {
                throw StoreError.sqlite(error, path: path)
            }
        } catch let error as SQLiteError {
            throw StoreError.sqlite(error, path: path)
        }
        do {
            try migrate(connection, path: path)
            let seq = try connection.scalarInt("SELECT value FROM agent_state WHERE key = 'seq'") ?? 0
            let outboxMaxID = try connection.scalarInt("SELECT coalesce(max(id), 0) FROM outbox") ?? 0
            return Opened(connection: connection, seq: seq, outboxMaxID: outboxMaxID, checkedWhole: checkedWhole, movedAside: movedAside)
        } catch let error as SQLiteError {
            throw StoreError.sqlite(error, path: path)
        }
    }

    static func migrate(_ connection: SQLiteConnection, path: String) throws {
        let version = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard version <= Schema.latestVersion else {
            throw StoreError.newerSchema(found: version, supported: Schema.latestVersion, path: path)
        }
        for next in (version + 1)..<(Schema.latestVersion + 1) {
            try connection.transaction {
                try connection.execute(Schema.migrations[next - 1])
                try connection.execute("PRAGMA user_version = \(next)")
            }
        }
        // A kind added after schema 13 brings its own table: its migrations are counted in
        // agent_state (`schema_<kind>`), so adding one needs no new schema number.
        for kind in SampleKinds.all where !kind.migrations.isEmpty {
            let key = "schema_\(kind.name)"
            let applied = Int(try connection.scalar(sql: "SELECT value FROM agent_state WHERE key = ?", .text(key)) ?? 0)
            for next in applied..<kind.migrations.count {
                try connection.transaction {
                    try connection.execute(kind.migrations[next])
                    try connection.statement("INSERT OR REPLACE INTO agent_state (key, value) VALUES (?, ?)")
                        .bind(.text(key), .integer(Int64(next + 1))).run()
                }
            }
        }
    }

    static func ensureDirectory(of path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
}
