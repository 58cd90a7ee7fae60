import Foundation

/// The ingest journal (schema 7; docs/storage.md, "The ingest journal"): at 1 Hz a commit window
/// is written as one fixed-size slot of `ingest_journal`, rewritten in place — one 512-byte page,
/// one WAL frame — instead of a leaf of each of the six b-trees its rows belong to. Every
/// `foldAfter` (and before anything reads the rows without a cursor) the pending windows are
/// folded into the indexed tables in one transaction. A window that does not fit a slot (a
/// backlog, a 10 Hz strap) folds the journal and goes to the tables in the same transaction.
///
/// Durability is the same: a window is stored once its slot's commit is synced, and a crash
/// leaves the slots, which the next start folds. Readers of the tables — `rows(after:)`, the
/// `StoreReader` of queries and the command line — see a window once it is folded; a query asks
/// for a fold first (`foldJournal`), so it still answers with every committed row.
extension Store {
    /// Reads the ring of the file now open, once: where it stands, and the windows a crash left
    /// unfolded, which are folded now.
    func loadJournalIfNeeded() throws {
        guard !journalLoaded else { return }
        let folded = try db.scalarInt("SELECT value FROM agent_state WHERE key = 'journal_folded'") ?? 0
        var leftovers: [(slot: Int, entry: JournalEntry)] = []
        var newest: (slot: Int, seq: Int64)?
        let statement = try db.statement("SELECT slot, body FROM ingest_journal")
        while try statement.step() {
            let slot = Int(statement.int64(0))
            guard let entry = JournalEntry.decode(statement.blob(1)) else {
                logger.error("an ingest journal slot cannot be read; its rows are lost", metadata: ["slot": "\(slot)"])
                continue
            }
            if entry.seq > (newest?.seq ?? 0) { newest = (slot, entry.seq) }
            if entry.seq > folded { leftovers.append((slot, entry)) }
        }
        var fresh = IngestJournal(foldAfter: journal.foldAfter)
        if let newest { fresh.resume(afterSlot: newest.slot, seq: max(newest.seq, folded)) }
        journal = fresh
        journalLoaded = true
        guard !leftovers.isEmpty else { return }
        let entries = leftovers.sorted { $0.entry.seq < $1.entry.seq }.map(\.entry)
        let rows = try db.transaction { try fold(entries) }
        logger.notice("folded the ingest journal left by the last run", metadata: ["windows": "\(entries.count)", "rows": "\(rows)"])
    }

    /// Moves every pending window into the indexed tables, in its own transaction: before a
    /// query, at shutdown, or before reading without a cursor. Nothing to do is free.
    /// Acknowledged outbox rows are deleted in the same commit.
    func foldJournal() throws {
        try loadJournalIfNeeded()
        guard !journal.pending.isEmpty || !acknowledgedUndeleted.isEmpty else { return }
        let acknowledged = acknowledgedUndeleted
        try db.transaction {
            try fold(journal.pending)
            try deleteAcknowledged(acknowledged)
        }
        journal.folded()
        acknowledgedUndeleted.subtract(acknowledged)
    }

    /// Folds once the oldest pending window has waited `foldAfter`, when no write came to do it
    /// (the sensors went quiet): the tables' readers are never more than that behind.
    /// Acknowledged outbox rows with nothing left to fold (the sensors are quiet, no fold will
    /// come) are deleted now, in a commit of their own as without the journal.
    public func foldJournalIfDue() {
        guard journalLoaded, journal.isDue(now: .now) || (journal.pending.isEmpty && !acknowledgedUndeleted.isEmpty) else { return }
        foldForReaders()
    }

    /// The journal into the tables for a read that wants every committed row: a query on another
    /// connection (read your writes), a read here without a cursor, whatever reads the file after
    /// the agent stops (the command line, `sqlite3`, a backup). A fold that fails (disk full) is
    /// logged and the reader answers from the tables as they are.
    public func foldForReaders() {
        do {
            try foldJournal()
        } catch {
            logger.warning("could not fold the ingest journal before a read", metadata: ["error": "\(error)"])
        }
    }

    /// What `status.store.journal` reports.
    public func journalStatus() -> JournalStatus {
        JournalStatus(
            enabled: journalEnabled, pendingWindows: journal.pending.count, pendingRows: journal.pendingRows, folds: journal.folds,
            foldedRows: journal.foldedRows)
    }

    // MARK: Inside a write's transaction

    /// The rows of a write not already stored or pending (a replay stores nothing), as the
    /// journal's next window.
    func unseenRows(fixes: [StoredFix], heartRates: [StoredHeartRate], steps: [StoredStepRecord]) throws -> JournalEntry {
        var entry = JournalEntry(seq: journal.nextSeq)
        var fixTimes: Set<Int64> = []
        for fix in fixes where !journal.holds(fixAt: fix.timeMs) && fixTimes.insert(fix.timeMs).inserted {
            if try exists(db.statement("SELECT 1 FROM fix WHERE ts_ms = ?").bind(.integer(fix.timeMs))) { continue }
            entry.fixes.append(fix)
        }
        var heartRateKeys: Set<IngestJournal.HeartRateKey> = []
        for sample in heartRates {
            let key = IngestJournal.HeartRateKey(sensor: sample.sensor, timeMs: sample.timeMs)
            guard !journal.holds(key), heartRateKeys.insert(key).inserted else { continue }
            if try exists(db.statement("SELECT 1 FROM hr_sample WHERE sensor = ? AND ts_ms = ?")
                .bind(.text(sample.sensor), .integer(sample.timeMs))) { continue }
            entry.heartRates.append(sample)
        }
        var stepKeys: Set<IngestJournal.StepKey> = []
        for record in steps {
            let key = IngestJournal.StepKey(sensor: record.sensor, kind: record.kind.rawValue, timeMs: record.timeMs)
            guard !journal.holds(key), stepKeys.insert(key).inserted else { continue }
            if try exists(db.statement("SELECT 1 FROM step_record WHERE sensor = ? AND kind = ? AND ts_ms = ?")
                .bind(.text(record.sensor), .text(key.kind), .integer(record.timeMs))) { continue }
            entry.steps.append(record)
        }
        return entry
    }

    /// Whether the statement finds a row; reset at once, so no cached statement holds a read
    /// snapshot past the commit (it would hold back checkpoints).
    private func exists(_ statement: SQLiteStatement) throws -> Bool {
        defer { statement.reset() }
        return try statement.step()
    }

    /// Whether every row lies in a day without a stored aggregate (today, live): only then may
    /// the window wait in the journal.
    func mayJournal(_ entry: JournalEntry) throws -> Bool {
        if journal.aggregatedUntilMs == nil {
            let newest = try db.scalarText("SELECT max(date) FROM day_aggregate")
            journal.aggregatedUntilMs = newest.flatMap { LocalDay($0, timeZone: dayTimeZone)?.boundsMs.end } ?? .min
        }
        let floor = journal.aggregatedUntilMs ?? .max
        return entry.fixes.allSatisfy { $0.timeMs >= floor } && entry.heartRates.allSatisfy { $0.timeMs >= floor }
            && entry.steps.allSatisfy { $0.timeMs >= floor }
    }

    /// Writes `body` (an encoded window) to the ring's next slot: one page changed.
    func writeSlot(_ body: [UInt8]) throws {
        try db.statement("UPDATE ingest_journal SET body = ? WHERE slot = ?").bind(.blob(body), .integer(Int64(journal.nextSlot))).run()
    }

    /// Inserts the windows' rows into the indexed tables and records the last seq folded; the
    /// number of rows inserted. The caller's transaction.
    @discardableResult
    func fold(_ entries: [JournalEntry]) throws -> Int {
        guard let last = entries.last else { return 0 }
        let result = try insertRows(
            fixes: entries.flatMap(\.fixes), heartRates: entries.flatMap(\.heartRates), steps: entries.flatMap(\.steps))
        try db.statement("UPDATE agent_state SET value = ? WHERE key = 'journal_folded'").bind(.integer(last.seq)).run()
        return result.fixesInserted + result.heartRatesInserted + result.stepRecordsInserted
    }
}

/// The ingest journal as `status.store.journal` reports it.
public struct JournalStatus: Sendable, Equatable {
    public var enabled: Bool
    /// Windows written to the ring and not yet folded, and their rows.
    public var pendingWindows: Int
    public var pendingRows: Int
    /// Folds since start, and the rows they moved into the tables.
    public var folds: Int
    public var foldedRows: Int
}
