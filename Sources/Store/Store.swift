import CSQLite
import Foundation
import Logging

public enum StoreError: Error, CustomStringConvertible {
    case newerSchema(found: Int, supported: Int, path: String)
    case sqlite(SQLiteError, path: String)

    public var description: String {
        switch self {
        case .newerSchema(let found, let supported, let path):
            "\(path) has schema version \(found), newer than this keepalive understands (\(supported)); install a newer keepalive or move the file away"
        case .sqlite(let error, let path):
            "\(path): \(error)"
        }
    }
}

/// The agent's SQLite store: fixes, heart-rate notifications, daily aggregates, agent state and
/// the durable outbox, in one WAL-mode file.
///
/// An actor: one writer connection, used by one task at a time. Every write is one transaction,
/// so a message in the outbox is committed together with the data it reports, or not at all.
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

    /// The writer connection; replaced by `reopen` when the file was deleted or replaced.
    var db: SQLiteConnection
    let logger: Logger
    let synchronous: String
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

    public init(
        path: String, synchronous: String = "full", fullCheckMaxBytes: Int64 = Store.defaultFullCheckMaxBytes,
        dayTimeZone: TimeZone = .current, logger: Logger = Logger(label: "keepalive.store")
    ) throws {
        self.path = path
        self.logger = logger
        self.dayTimeZone = dayTimeZone
        self.synchronous = synchronous
        let opened = try Self.open(path: path, synchronous: synchronous, fullCheckMaxBytes: fullCheckMaxBytes, logger: logger)
        db = opened.connection
        seq = opened.seq
        movedAsideCorruptFile = opened.movedAside
        needsFullCheck = !opened.checkedWhole
        identity = FileIdentity(path: path)
    }

    /// Opens, sets the pragmas, and checks the file: all of it up to `fullCheckMaxBytes`, else
    /// the small tables the agent cannot run without. A damaged file throws SQLITE_CORRUPT.
    /// Returns the connection and whether the whole file was checked.
    static func openChecked(path: String, synchronous: String, fullCheckMaxBytes: Int64) throws -> (SQLiteConnection, Bool) {
        let connection = try SQLiteConnection(path: path)
        // Only takes effect on a new, empty file: lets pruning give space back to the disk.
        try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = \(synchronous == "normal" ? "NORMAL" : "FULL")")
        try connection.execute("PRAGMA foreign_keys = ON")
        // Keep the WAL from growing without bound between checkpoints on a busy day.
        try connection.execute("PRAGMA journal_size_limit = 8388608")
        let size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil) ?? 0
        let whole = size <= fullCheckMaxBytes
        let check: String
        if whole {
            check = try connection.scalarText("PRAGMA quick_check") ?? "no answer"
        } else {
            let smallTables: [(name: String, check: StaticString)] = [
                ("agent_state", "PRAGMA quick_check(agent_state)"), ("outbox", "PRAGMA quick_check(outbox)"),
                ("day_aggregate", "PRAGMA quick_check(day_aggregate)"),
            ]
            let exists = try connection.statement("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?")
            var finding = "ok"
            for table in smallTables where finding == "ok" {
                let present = try exists.bind(.text(table.name)).step() && exists.int(0) == 1
                exists.reset()
                if present { finding = try connection.scalarText(table.check) ?? "no answer" }
            }
            check = finding
        }
        guard check == "ok" else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "quick_check: \(check)")
        }
        return (connection, whole)
    }

    /// Runs `PRAGMA quick_check` over the whole file on a connection of its own (read-only: it
    /// never holds up the writer); nil when intact, else what it found. Takes minutes on a large
    /// file on an SD card: run it off Swift's task threads. `onOpen` receives the connection,
    /// whose `interrupt()` stops the check from another thread.
    public static func fullCheck(path: String, onOpen: (SQLiteConnection) -> Void = { _ in }) throws -> String? {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        onOpen(connection)
        let check = try connection.scalarText("PRAGMA quick_check") ?? "no answer"
        return check == "ok" ? nil : check
    }

    /// Records that a full check found the file damaged: the next start moves it aside and
    /// begins a new one (the agent cannot swap the file it is writing to while it runs).
    public static func markDamaged(path: String, finding: String) throws {
        try Data(finding.utf8).write(to: URL(fileURLWithPath: damageMarker(path)), options: .atomic)
    }

    static func damageMarker(_ path: String) -> String { path + ".damaged" }

    static func damageFinding(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: damageMarker(path)) else { return nil }
        return String(decoding: data.prefix(2000), as: UTF8.self)
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
    }

    static func ensureDirectory(of path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Renames a damaged file (and its -wal/-shm) to `<path>.corrupt-<UTC time>`, keeping it for inspection.
    static func moveAside(_ path: String) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let aside = "\(path).corrupt-\(formatter.string(from: Date()))"
        let manager = FileManager.default
        try manager.moveItem(atPath: path, toPath: aside)
        for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
            try? manager.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        return aside
    }

    // MARK: - Writing

    /// Stores fixes and heart-rate notifications and queues messages, all in one transaction.
    /// Duplicates (same fix time; same sensor and time) are ignored, so a replay stores nothing.
    @discardableResult
    public func write(
        fixes: [StoredFix] = [], heartRates: [StoredHeartRate] = [], steps: [StoredStepRecord] = [], messages: [OutboxDraft] = []
    ) throws -> StoreWriteResult
    {
        let seqBefore = seq
        do {
            let result = try db.transaction {
                var result = StoreWriteResult()
                var freshness = AggregateFreshness(timeZone: dayTimeZone)
                for fix in fixes {
                    guard let id = try insert(fix) else { continue }
                    result.fixesInserted += 1
                    freshness.added(fixID: id, timeMs: fix.timeMs)
                }
                for heartRate in heartRates {
                    guard let id = try insert(heartRate) else { continue }
                    result.heartRatesInserted += 1
                    freshness.added(heartRateID: id, timeMs: heartRate.timeMs)
                }
                for record in steps {
                    guard let id = try insert(record) else { continue }
                    result.stepRecordsInserted += 1
                    freshness.added(stepID: id, timeMs: record.timeMs)
                }
                try freshness.record(in: db)
                // Held messages first: their seqs are older than any taken now.
                for message in held { try enqueue(held: message) }
                for message in messages { result.seqs.append(try enqueue(message)) }
                if !messages.isEmpty || !held.isEmpty {
                    try db.statement("UPDATE agent_state SET value = ? WHERE key = 'seq'").bind(.integer(seq)).run()
                }
                return result
            }
            if !held.isEmpty {
                logger.notice("queued the messages held while the store could not be written", metadata: ["seqs": "\(held.map(\.seq))"])
                held.removeAll()
            }
            return result
        } catch {
            seq = seqBefore
            throw error
        }
    }

    /// The new row's id, or nil for a duplicate.
    func insert(_ fix: StoredFix) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO fix (ts_ms, received_ms, lat, lon, alt_hae, alt_msl, speed, track, climb, eph, epv,
                                       mode, satellites, time_source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .integer(fix.timeMs), .integer(fix.receivedMs), .real(fix.lat), .real(fix.lon), .double(fix.altHAE),
            .double(fix.altMSL), .double(fix.speed), .double(fix.track), .double(fix.climb), .double(fix.eph),
            .double(fix.epv), .integer(Int64(fix.mode)), .int(fix.satellites), .text(fix.timeSource)
        ).run()
        return db.changes > 0 ? db.lastInsertRowID : nil
    }

    /// The new notification's id, or nil for a duplicate.
    func insert(_ heartRate: StoredHeartRate) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO hr_sample (sensor, ts_ms, received_ms, bpm, contact, energy_kj, valid, raw)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .text(heartRate.sensor), .integer(heartRate.timeMs), .integer(heartRate.receivedMs),
            .integer(Int64(heartRate.bpm)), .integer(Int64(heartRate.contact)), .int(heartRate.energyKJ),
            .integer(heartRate.valid ? 1 : 0), .blob(heartRate.raw)
        ).run()
        guard db.changes > 0 else { return nil }
        let sampleID = db.lastInsertRowID
        // RR intervals describe the beats before the notification: the newest ends at its time.
        var end = heartRate.timeMs
        var stamps: [Int64] = Array(repeating: 0, count: heartRate.rrIntervals.count)
        for index in heartRate.rrIntervals.indices.reversed() {
            stamps[index] = end
            end -= Int64((Double(heartRate.rrIntervals[index]) * 1000 / 1024).rounded())
        }
        for (position, rr) in heartRate.rrIntervals.enumerated() {
            try db.statement("INSERT INTO rr_interval (sample_id, position, ts_ms, rr_1024) VALUES (?, ?, ?, ?)").bind(
                .integer(sampleID), .integer(Int64(position)), .integer(stamps[position]), .integer(Int64(rr))
            ).run()
        }
        return sampleID
    }

    private func enqueue(_ draft: OutboxDraft) throws -> Int64 {
        if draft.supersedable {
            try db.statement("DELETE FROM outbox WHERE topic = ? AND supersedable = 1 AND rejected_reason IS NULL")
                .bind(.text(draft.topic)).run()
        }
        seq += 1
        try db.statement(
            """
            INSERT INTO outbox (seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .integer(seq), .text(draft.topic), .blob(draft.makePayload(seq)), .integer(Int64(draft.qos)),
            .integer(draft.retain ? 1 : 0), draft.contentType.map { .text($0) }, .int(draft.expiryS),
            .integer(draft.supersedable ? 1 : 0), .integer(Self.nowMs())
        ).run()
        return seq
    }

    /// Takes the next `seq` for a message that does not go through the outbox (the MQTT will),
    /// so the counter still never goes back.
    public func reserveSeq() throws -> Int64 {
        try db.transaction {
            seq += 1
            try db.statement("UPDATE agent_state SET value = ? WHERE key = 'seq'").bind(.integer(seq)).run()
        }
        return seq
    }

    public var currentSeq: Int64 { seq }

    /// A seq for a message sent live, outside the outbox, while the file cannot be written (disk
    /// full). It is kept in memory and saved with the next message that is stored, so the counter
    /// goes back after a restart only if no write at all succeeded in between.
    public func volatileSeq() -> Int64 {
        seq += 1
        return seq
    }

    // MARK: - The outbox

    /// Undelivered messages after `afterID`, oldest first.
    public func pendingMessages(afterID: Int64, limit: Int) throws -> [OutboxEntry] {
        let statement = try db.statement(
            """
            SELECT id, seq, topic, payload, qos, retain, content_type, expiry_s, created_ms FROM outbox
            WHERE id > ? AND rejected_reason IS NULL ORDER BY id LIMIT ?
            """
        ).bind(.integer(afterID), .integer(Int64(limit)))
        var entries: [OutboxEntry] = []
        while try statement.step() {
            entries.append(
                OutboxEntry(
                    id: statement.int64(0), seq: statement.int64(1), topic: statement.text(2), payload: statement.blob(3),
                    qos: statement.int(4), retain: statement.int(5) != 0, contentType: statement.optionalText(6),
                    expiryS: statement.optionalInt(7), createdMs: statement.int64(8)))
        }
        return entries
    }

    /// The broker has them: they leave the outbox. Ids read before a `reopen` (another
    /// `fileGeneration`) name other messages in the new file and are ignored.
    public func acknowledge(ids: [Int64], generation: Int? = nil) throws {
        guard !ids.isEmpty, generation.map({ $0 == fileGeneration }) ?? true else { return }
        try db.transaction {
            for id in ids { try db.statement("DELETE FROM outbox WHERE id = ?").bind(.integer(id)).run() }
        }
    }

    /// The broker refused it (v5 reason ≥ 0x80): kept, out of the queue, for a person to look at.
    public func setAside(id: Int64, reason: String, generation: Int? = nil) throws {
        guard generation.map({ $0 == fileGeneration }) ?? true else { return }
        try db.statement("UPDATE outbox SET rejected_reason = ? WHERE id = ?").bind(.text(reason), .integer(id)).run()
    }

    public struct OutboxSummary: Sendable, Equatable {
        public var pending: Int
        public var oldestCreatedMs: Int64?
        public var setAside: Int
    }

    public func outboxSummary() throws -> OutboxSummary {
        let statement = try db.statement(
            """
            SELECT count(*) FILTER (WHERE rejected_reason IS NULL),
                   min(created_ms) FILTER (WHERE rejected_reason IS NULL),
                   count(*) FILTER (WHERE rejected_reason IS NOT NULL) FROM outbox
            """)
        defer { statement.reset() }
        _ = try statement.step()
        return OutboxSummary(
            pending: statement.int(0), oldestCreatedMs: statement.isNull(1) ? nil : statement.int64(1),
            setAside: statement.int(2))
    }

    // MARK: - Reading

    /// Fixes with `fromMs <= ts_ms < toMs`, in time order (a local day: `LocalDay.bounds`).
    /// `upTo` leaves out rows stored after a `RowCursor` was taken.
    /// Streams them instead, for a whole day without holding it in memory.
    public func forEachFix(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredFix) throws -> Void) throws {
        try db.forEachFix(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    public func fixes(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredFix] {
        var fixes: [StoredFix] = []
        try forEachFix(fromMs: fromMs, toMs: toMs, upTo: cursor) { fixes.append($0) }
        return fixes
    }

    /// Heart-rate notifications with `fromMs <= ts_ms < toMs`, in time order, with their RR intervals.
    public func forEachHeartRate(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredHeartRate) throws -> Void
    ) throws {
        try db.forEachHeartRate(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    public func heartRates(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredHeartRate] {
        var samples: [StoredHeartRate] = []
        try forEachHeartRate(fromMs: fromMs, toMs: toMs, upTo: cursor) { samples.append($0) }
        return samples
    }

    /// Where the newest stored rows are: what `rows(after:)` continues from.
    public func rowCursor() throws -> RowCursor { try db.rowCursor() }

    /// Rows stored after `cursor`, in the order they were stored (not time order: a bridge
    /// backlog arrives late), at most `limit` of each kind, and the cursor after them. This is
    /// how the running day aggregates see new data without reading the day again.
    public func rows(after cursor: RowCursor, limit: Int) throws -> NewRows {
        try db.rows(after: cursor, limit: limit)
    }

    /// Whether any fix, heart-rate notification or step record lies in `[fromMs, toMs)`.
    public func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool {
        try db.hasRawData(fromMs: fromMs, toMs: toMs)
    }

    public func dayAggregate(date: String) throws -> StoredDayAggregate? {
        try db.dayAggregate(date: date)
    }

    /// The newest day with a final aggregate (dates sort as text).
    public func latestFinalAggregateDate() throws -> String? {
        try db.scalarText("SELECT date FROM day_aggregate WHERE final = 1 ORDER BY date DESC LIMIT 1")
    }

    /// Saves a day's aggregate computed from the rows up to `cursor` (`day`'s bounds in Unix ms):
    /// rows of the day stored after the cursor leave it stale (`StoredDayAggregate.isStale`).
    public func saveDayAggregate(_ aggregate: StoredDayAggregate, builtUpTo cursor: RowCursor, dayMs: (start: Int64, end: Int64)) throws {
        try db.statement(
            """
            INSERT INTO day_aggregate (date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix,
                                       built_fix_id, built_hr_id, newest_fix_id, newest_hr_id, built_step_id, newest_step_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                    (SELECT max(id) FROM fix WHERE ts_ms >= ?11 AND ts_ms < ?12),
                    (SELECT max(id) FROM hr_sample WHERE ts_ms >= ?11 AND ts_ms < ?12), ?13,
                    (SELECT max(id) FROM step_record WHERE ts_ms >= ?11 AND ts_ms < ?12))
            ON CONFLICT (date) DO UPDATE SET tz = excluded.tz, payload = excluded.payload, final = excluded.final,
                updated_ms = excluded.updated_ms, published_payload = coalesce(excluded.published_payload, published_payload),
                first_fix = excluded.first_fix, last_fix = excluded.last_fix, built_fix_id = excluded.built_fix_id,
                built_hr_id = excluded.built_hr_id, newest_fix_id = excluded.newest_fix_id, newest_hr_id = excluded.newest_hr_id,
                built_step_id = excluded.built_step_id, newest_step_id = excluded.newest_step_id
            """
        ).bind(
            .text(aggregate.date), .text(aggregate.tz), .text(aggregate.payload), .integer(aggregate.final ? 1 : 0),
            .integer(aggregate.updatedMs), aggregate.publishedPayload.map { .text($0) }, aggregate.firstFix.map { .text($0) },
            aggregate.lastFix.map { .text($0) }, .integer(cursor.fixID), .integer(cursor.heartRateID), .integer(dayMs.start),
            .integer(dayMs.end), .integer(cursor.stepID)
        ).run()
    }

    /// The day's aggregate was computed again up to `cursor` and came out as already stored:
    /// only its freshness changes.
    public func markDayAggregateCurrent(date: String, builtUpTo cursor: RowCursor) throws {
        try db.statement("UPDATE day_aggregate SET built_fix_id = ?, built_hr_id = ?, built_step_id = ? WHERE date = ?")
            .bind(.integer(cursor.fixID), .integer(cursor.heartRateID), .integer(cursor.stepID), .text(date)).run()
    }

    // MARK: - Retention and size

    /// Deletes up to `limit` raw rows older than `beforeMs` per table, in short transactions so
    /// ingest never waits long; call repeatedly until it returns 0. Aggregates are kept.
    public func pruneRawRows(beforeMs: Int64, limit: Int = 2000) throws -> Int {
        var deleted = 0
        try db.transaction {
            try db.statement("DELETE FROM fix WHERE id IN (SELECT id FROM fix WHERE ts_ms < ? ORDER BY ts_ms LIMIT ?)")
                .bind(.integer(beforeMs), .integer(Int64(limit))).run()
            deleted += db.changes
            try db.statement(
                "DELETE FROM hr_sample WHERE id IN (SELECT id FROM hr_sample WHERE ts_ms < ? ORDER BY ts_ms LIMIT ?)"
            ).bind(.integer(beforeMs), .integer(Int64(limit))).run()
            deleted += db.changes
            try db.statement(
                "DELETE FROM step_record WHERE id IN (SELECT id FROM step_record WHERE ts_ms < ? ORDER BY ts_ms LIMIT ?)"
            ).bind(.integer(beforeMs), .integer(Int64(limit))).run()
            deleted += db.changes
        }
        return deleted
    }

    /// Returns up to `pages` free pages to the file system (auto_vacuum = INCREMENTAL).
    public func releaseFreePages(_ pages: Int = 1000) throws {
        try db.execute("PRAGMA incremental_vacuum(\(pages))")
    }

    /// The time of the oldest raw row, for a size cap that removes the oldest first.
    public func oldestRawTimeMs() throws -> Int64? {
        let statement = try db.statement("""
            SELECT min(t) FROM (SELECT min(ts_ms) AS t FROM fix UNION ALL SELECT min(ts_ms) FROM hr_sample
                                UNION ALL SELECT min(ts_ms) FROM step_record)
            """)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return statement.int64(0)
    }

    public struct SpaceReport: Sendable, Equatable {
        /// Bytes of data in the file (pages in use), not counting free pages.
        public var usedBytes: Int64
        public var fileBytes: Int64
        public var freeDiskBytes: Int64?
    }

    public func space() throws -> SpaceReport {
        let pageSize = try db.scalarInt("PRAGMA page_size") ?? 4096
        let pages = try db.scalarInt("PRAGMA page_count") ?? 0
        let freePages = try db.scalarInt("PRAGMA freelist_count") ?? 0
        var stats = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        let free: Int64? = statvfs(directory.isEmpty ? "." : directory, &stats) == 0 ? Int64(stats.f_bavail) * Int64(stats.f_frsize) : nil
        return SpaceReport(usedBytes: (pages - freePages) * pageSize, fileBytes: pages * pageSize, freeDiskBytes: free)
    }

    /// `PRAGMA integrity_check` (slow: the whole file). "ok" when healthy.
    public func integrityCheck() throws -> String {
        try db.scalarText("PRAGMA integrity_check") ?? "no answer"
    }

    static func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
