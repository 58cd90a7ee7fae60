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
            for kind in SampleKinds.all {
                report.rowsCarried[kind.rowsName] = try await copyRows(of: kind, from: old, fromMs: fromMs, afterID: since[name: kind.name])
            }
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
        let select = try old.statement(sql: Self.dayAggregatesWithStale)
        defer { select.reset() }
        var copied = 0
        while try select.step() {
            try fresh.statement(sql: Self.copiedDayAggregate).bind(
                .text(select.text(0)), .text(select.text(1)), .text(select.text(2)), .integer(select.int64(3)),
                .integer(select.int64(4)), select.optionalText(5).map { .text($0) }, select.optionalText(6).map { .text($0) },
                select.optionalText(7).map { .text($0) }, .integer(select.int64(8))
            ).run()
            copied += fresh.changes
        }
        return copied
    }

    private static let dayAggregatesWithStale = """
        SELECT date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix, \(AggregateFreshness.staleExpression)
        FROM day_aggregate
        """

    /// The copied aggregate's freshness: stale (`built` 0, `newest` 1 of the first kind) or, for
    /// every kind, current until a row of its day arrives (NULL).
    private static let copiedDayAggregate: String = {
        let first = "built_\(SampleKinds.all[0].name)_id, newest_\(SampleKinds.all[0].name)_id"
        let resets = SampleKinds.all.map { "built_\($0.name)_id = excluded.built_\($0.name)_id, newest_\($0.name)_id = excluded.newest_\($0.name)_id" }
        return """
            INSERT INTO day_aggregate (date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix, \(first))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, CASE WHEN ?9 THEN 0 END, CASE WHEN ?9 THEN 1 END)
            ON CONFLICT (date) DO UPDATE SET tz = excluded.tz, payload = excluded.payload, final = excluded.final,
                updated_ms = excluded.updated_ms, published_payload = excluded.published_payload,
                first_fix = excluded.first_fix, last_fix = excluded.last_fix, \(resets.joined(separator: ", "))
            WHERE excluded.updated_ms >= day_aggregate.updated_ms
            """
    }()

    private static let copyChunk = 2000

    /// A kind's rows from `fromMs` on (by time) and after `afterID` (by id), a chunk per transaction.
    private func copyRows<Kind: SampleKind>(
        of kind: Kind.Type, from old: SQLiteConnection, fromMs: Int64, afterID: Int64
    ) async throws -> Int {
        var copied = 0
        var next = (ms: fromMs, id: Int64(-1))
        var nextID = afterID
        for byTime in [true, false] {
            while true {
                var chunk: [Kind.Row] = []
                if byTime {
                    try Kind.forEach(fromMs: next.ms, afterID: next.id, limit: Self.copyChunk, in: old) { row, id in
                        chunk.append(row)
                        next = (Kind.timeMs(of: row), id)
                    }
                } else {
                    try Kind.forEach(afterID: nextID, limit: Self.copyChunk, in: old) { row, id in
                        chunk.append(row)
                        nextID = id
                    }
                }
                guard !chunk.isEmpty else { break }
                copied += try db.transaction { try chunk.filter { try Kind.insert($0, into: db) != nil }.count }
                await Task.yield()
            }
        }
        return copied
    }
}
