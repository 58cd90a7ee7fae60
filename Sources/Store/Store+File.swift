import Foundation
import Logging
import Supervision

/// The file under the store: noticing when the path no longer names the file the
/// connection has open — deleted by a careless `rm`, replaced by `mv`, an SD card remounted.
/// SQLite would go on writing to the unlinked inode, and everything after the deletion would
/// be gone at the next start. `checkFile` compares the path's device and inode with the open
/// file's; `reopen` opens (or creates) the file now at the path and carries over what the agent
/// must not lose.
extension Store {
    /// nil while the path still names the open file; else what happened to it.
    public func checkFile() -> StoreFileProblem? {
        guard let main = FileIdentity.Node(path: path) else { return .deleted }
        guard main == identity.main else { return .replaced }
        // The same file: note its -wal and -shm (SQLite creates them lazily) and how far its rows
        // go, so a reopen knows which rows came after this check.
        identity = FileIdentity(path: path)
        verifiedCursor = (try? reads.rowCursor()) ?? verifiedCursor
        return nil
    }

    /// Rows of this age or newer are carried into a new file (the open days' aggregates are
    /// rebuilt from them), besides every row stored since the last `checkFile`.
    public static let carriedRowsMaxAgeMs: Int64 = 48 * 3_600_000

    /// Opens the file now at `path` — a new one if it was deleted, the one put there if it was
    /// replaced (a damaged one is moved aside) — and carries over from the old one, still open:
    /// the seq counter (it never goes back), the outbox (undelivered messages stay promised),
    /// the day aggregates, and the raw rows of the last 48 hours and those stored since the last
    /// check. Older raw rows went with the deleted file. The outbox's ids change: the drain must
    /// start again from the oldest (`OutboxDrain.storeReplaced`).
    public func reopen(after problem: StoreFileProblem, now: Date? = nil) async throws -> StoreReopened {
        let now = now ?? clock.now()
        // The old file's journal into its tables, where the copy below finds the rows.
        foldForReaders()
        let old = db
        old.keepWALOnClose()
        // The -wal and -shm at the path are the old file's: a new file must not pick them up.
        for (suffix, node) in [("-wal", identity.wal), ("-shm", identity.shm)] {
            if let node, FileIdentity.Node(path: path + suffix) == node { unlink(path + suffix) }
        }
        let opened = try Self.open(
            path: path, synchronous: synchronous, fullCheckMaxBytes: Self.defaultFullCheckMaxBytes, now: now, logger: logger)
        var report = StoreReopened(problem: problem, movedAside: opened.movedAside)
        let fresh = opened.connection
        let carriedSeq = max(seq, opened.seq)
        do {
            (report.outboxMessages, report.dayAggregates) = try Self.carryOver(seq: carriedSeq, from: old, to: fresh)
        } catch let error as SQLiteError {
            throw StoreError.sqlite(error, path: path)
        }
        seq = carriedSeq
        let since = verifiedCursor
        db = fresh
        ring.unload()
        acknowledgedUndeleted.removeAll()
        outboxLeftByLastRun = (try? db.scalarInt("SELECT coalesce(max(id), 0) FROM outbox")) ?? 0
        handedOutMaxID = 0
        fileGeneration += 1
        identity = FileIdentity(path: path)
        // Raw rows in small transactions, letting ingest in between: the new file takes writes now.
        let fromMs = now.unixMs - Self.carriedRowsMaxAgeMs
        do {
            report.fixes = try await copyFixes(from: old, fromMs: fromMs, afterID: since.fixID)
            report.heartRates = try await copyHeartRates(from: old, fromMs: fromMs, afterID: since.heartRateID)
            report.stepRecords = try await copyStepRecords(from: old, afterID: since.stepID)
        } catch {
            logger.error("could not carry every recent row into the new store file", metadata: ["error": "\(error)"])
        }
        verifiedCursor = (try? reads.rowCursor()) ?? RowCursor()
        return report
    }

    /// The seq, the outbox, the day aggregates, the workouts and the shoes, in one transaction on the new file.
    private static func carryOver(seq: Int64, from old: SQLiteConnection, to fresh: SQLiteConnection) throws -> (outbox: Int, aggregates: Int) {
        try fresh.transaction {
            try fresh.statement("UPDATE agent_state SET value = ? WHERE key = 'seq'").bind(.integer(seq)).run()
            let copied = (try copyOutbox(from: old, to: fresh), try copyDayAggregates(from: old, to: fresh))
            try copyWorkoutsAndGear(from: old, to: fresh)
            return copied
        }
    }

    private static func copyOutbox(from old: SQLiteConnection, to fresh: SQLiteConnection) throws -> Int {
        let select = try old.statement(
            """
            SELECT seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms, rejected_reason
            FROM outbox WHERE delivered = 0 ORDER BY id
            """)
        defer { select.reset() }
        var copied = 0
        while try select.step() {
            // A replacement that is a copy of the old file may hold the same messages already.
            try fresh.statement(
                """
                INSERT INTO outbox (seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms, rejected_reason)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE seq = ?1)
                """
            ).bind(
                .integer(select.int64(0)), .text(select.text(1)), .blob(select.blob(2)), .integer(select.int64(3)),
                .integer(select.int64(4)), select.optionalText(5).map { .text($0) }, .int(select.optionalInt(6)),
                .integer(select.int64(7)), .integer(select.int64(8)), select.optionalText(9).map { .text($0) }
            ).run()
            copied += fresh.changes
        }
        return copied
    }

    /// The newer of each day's aggregate wins. Row ids do not survive the move: an aggregate that
    /// late rows had overtaken stays stale (newest 1 > built 0); a current one is current until a
    /// row of its day arrives in the new file (built NULL).
    private static func copyDayAggregates(from old: SQLiteConnection, to fresh: SQLiteConnection) throws -> Int {
        let select = try old.statement(
            """
            SELECT date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix,
                   coalesce(newest_fix_id > coalesce(built_fix_id, 0), 0) OR coalesce(newest_hr_id > coalesce(built_hr_id, 0), 0)
                   OR coalesce(newest_step_id > coalesce(built_step_id, 0), 0)
            FROM day_aggregate
            """)
        defer { select.reset() }
        var copied = 0
        while try select.step() {
            try fresh.statement(
                """
                INSERT INTO day_aggregate (date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix,
                                           built_fix_id, newest_fix_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, CASE WHEN ?9 THEN 0 END, CASE WHEN ?9 THEN 1 END)
                ON CONFLICT (date) DO UPDATE SET tz = excluded.tz, payload = excluded.payload, final = excluded.final,
                    updated_ms = excluded.updated_ms, published_payload = excluded.published_payload,
                    first_fix = excluded.first_fix, last_fix = excluded.last_fix, built_fix_id = excluded.built_fix_id,
                    newest_fix_id = excluded.newest_fix_id, built_hr_id = NULL, newest_hr_id = NULL,
                    built_step_id = NULL, newest_step_id = NULL
                WHERE excluded.updated_ms >= day_aggregate.updated_ms
                """
            ).bind(
                .text(select.text(0)), .text(select.text(1)), .text(select.text(2)), .integer(select.int64(3)),
                .integer(select.int64(4)), select.optionalText(5).map { .text($0) }, select.optionalText(6).map { .text($0) },
                select.optionalText(7).map { .text($0) }, .integer(select.int64(8))
            ).run()
            copied += fresh.changes
        }
        return copied
    }

    private static let copyChunk = 2000

    /// Fixes from `fromMs` on (by time) and after `afterID` (by id), a chunk per transaction.
    private func copyFixes(from old: SQLiteConnection, fromMs: Int64, afterID: Int64) async throws -> Int {
        var copied = 0
        var nextMs = fromMs
        var nextID = afterID
        for byTime in [true, false] {
            while true {
                let statement = try byTime
                    ? old.statement(sql: Self.fixesFromTime).bind(.integer(nextMs), .integer(Int64(Self.copyChunk)))
                    : old.statement(sql: StoredFix.afterID).bind(.integer(nextID), .integer(Int64(Self.copyChunk)))
                let columns = try statement.layout(StoredFix.Columns.self)
                var chunk: [StoredFix] = []
                while try statement.step() {
                    let fix = columns.fix(statement)
                    chunk.append(fix)
                    if byTime { nextMs = fix.timeMs + 1 } else { nextID = columns.id(statement) }
                }
                statement.reset()
                guard !chunk.isEmpty else { break }
                copied += try db.transaction { try chunk.filter { try insert($0) != nil }.count }
                await Task.yield()
            }
        }
        return copied
    }

    /// Notifications (with their RR intervals) from `fromMs` on and after `afterID`.
    private func copyHeartRates(from old: SQLiteConnection, fromMs: Int64, afterID: Int64) async throws -> Int {
        var copied = 0
        var next = (ms: fromMs, id: Int64(-1))
        var nextID = afterID
        for byTime in [true, false] {
            while true {
                var chunk: [StoredHeartRate] = []
                if byTime {
                    try StoreReads(old).heartRates(after: next.ms, id: next.id, limit: Self.copyChunk) { heartRate, id in
                        chunk.append(heartRate)
                        next = (heartRate.timeMs, id)
                    }
                } else {
                    try StoreReads(old).heartRates(afterID: nextID, limit: Self.copyChunk) { heartRate, id in
                        chunk.append(heartRate)
                        nextID = id
                    }
                }
                guard !chunk.isEmpty else { break }
                copied += try db.transaction { try chunk.filter { try insert($0) != nil }.count }
                await Task.yield()
            }
        }
        return copied
    }

    /// Records after `afterID` from the old file into this one (a reopen), a chunk per transaction.
    private func copyStepRecords(from old: SQLiteConnection, afterID: Int64) async throws -> Int {
        var copied = 0
        var nextID = afterID
        while true {
            let statement = try old.statement(sql: StoredStepRecord.afterID).bind(.integer(nextID), .integer(Int64(Self.copyChunk)))
            let columns = try statement.layout(StoredStepRecord.Columns.self)
            var chunk: [StoredStepRecord] = []
            while try statement.step() {
                chunk.append(columns.stepRecord(statement))
                nextID = columns.id(statement)
            }
            statement.reset()
            guard !chunk.isEmpty else { return copied }
            copied += try db.transaction { try chunk.filter { try insert($0) != nil }.count }
            await Task.yield()
        }
    }

    private static let fixesFromTime = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? ORDER BY ts_ms LIMIT ?"
}
