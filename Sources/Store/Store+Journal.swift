import Foundation

/// The ingest journal (docs/storage.md, "The ingest journal"): at 1 Hz a commit window is
/// written as one fixed-size slot of a ring in a file of its own (`<store>-ingest`,
/// JournalFile.swift) — one 4 KiB page of the card, and no SQLite commit at all — instead of a
/// leaf of each of the six b-trees its rows belong to. Every `foldAfter` (and before anything
/// reads the rows without a cursor) the pending windows are folded into the indexed tables in
/// one transaction. A window that does not fit a slot (a backlog, a 10 Hz strap) folds the
/// journal and goes to the tables in the same transaction.
///
/// Durability is the same: a window is stored once its slot is synced, and a crash leaves the
/// slots, which the next start folds (`agent_state.journal_folded` is the seq of the last window
/// folded: slots at or below it are spent). Readers of the tables — `rows(after:)`, the
/// `StoreReader` of queries and the command line — see a window once it is folded; a query asks
/// for a fold first (`foldForReaders`), so it still answers with every committed row.
extension Store {
    /// Reads the ring of the file now open, once: where it stands, and the windows a crash left
    /// unfolded, which are folded now — from `<store>-ingest` and, once, from the `ingest_journal`
    /// table a schema-7 file kept them in (dropped after). With the journal off the file is only
    /// read, if it is there. A ring that cannot be opened (another agent holds it, a read-only
    /// directory) leaves the journal off for this file: windows go to the tables, logged.
    func loadJournalIfNeeded() throws {
        guard !ring.isLoaded else { return }
        let folded = try db.scalarInt("SELECT value FROM agent_state WHERE key = 'journal_folded'") ?? 0
        let found = ring.open(storePath: path, logger: logger)
        let hadTable = try legacyJournalExists()
        let legacy = hadTable ? try legacyJournalEntries() : []
        let entries = ring.resume(found: found, legacy: legacy, folded: folded)
        // Loaded once the leftovers are in the tables: while the fold fails (a full disk at
        // boot) every write tries again and fails, so no new window overwrites their slots.
        guard !entries.isEmpty || hadTable else {
            ring.loaded()
            return
        }
        let rows = try db.transaction {
            let rows = try fold(entries)
            if hadTable { try db.execute("DROP TABLE ingest_journal") }
            return rows
        }
        ring.loaded()
        if !entries.isEmpty {
            logger.notice("folded the ingest journal left by the last run", metadata: ["windows": "\(entries.count)", "rows": "\(rows)"])
        }
    }

    /// `<store>-ingest`: the ring of the store at `storePath`.
    static func journalPath(of storePath: String) -> String { IngestRing.path(of: storePath) }

    /// The windows the next start would fold, read from a stopped (or killed) agent's files
    /// without touching them: the ring's checked slots past `journal_folded`.
    static func unfoldedJournalEntries(storePath: String) throws -> [JournalEntry] {
        let db = try SQLiteConnection(path: storePath, readOnly: true)
        let folded = try db.scalarInt("SELECT value FROM agent_state WHERE key = 'journal_folded'") ?? 0
        guard let bytes = FileManager.default.contents(atPath: journalPath(of: storePath)) else { return [] }
        return JournalFile.checkedBodies(Array(bytes)).compactMap { JournalEntry.decode($0.body) }.filter { $0.seq > folded }
    }

    /// Whether the file still has the table schema 7 kept the ring in.
    private func legacyJournalExists() throws -> Bool {
        try db.hasTable("ingest_journal")
    }

    /// The windows in the `ingest_journal` table of a file written by schema 7 (before the ring
    /// had a file of its own): folded with the file's at the first start, then the table goes.
    private func legacyJournalEntries() throws -> [JournalEntry] {
        var entries: [JournalEntry] = []
        let statement = try db.statement("SELECT body FROM ingest_journal")
        defer { statement.reset() }
        while try statement.step() {
            if let entry = JournalEntry.decode(statement.blob(0)), entry.seq > 0 { entries.append(entry) }
        }
        return entries
    }

    /// Moves every pending window into the indexed tables, in its own transaction: before a
    /// query, at shutdown, or before reading without a cursor. Nothing to do is free.
    /// Acknowledged outbox rows are deleted (or marked delivered) in the same commit.
    func foldJournal() throws {
        try loadJournalIfNeeded()
        guard !ring.pending.isEmpty || !acknowledgedUndeleted.isEmpty else { return }
        let acknowledged = acknowledgedUndeleted
        try db.transaction {
            try fold(ring.pending)
            try deleteAcknowledged(acknowledged)
        }
        ring.folded()
        acknowledgedUndeleted.subtract(acknowledged)
        makeRingAgainIfMoved()
    }

    /// After a fold: a ring file deleted or replaced at its path is let go, and a new one made
    /// by the next write (`IngestRing.letGoIfMoved`).
    func makeRingAgainIfMoved() {
        guard let moved = ring.letGoIfMoved() else { return }
        logger.warning("the ingest journal file was deleted or replaced; making it again", metadata: ["path": "\(moved)"])
    }

    /// Folds once the oldest pending window has waited `foldAfter`, when no write came to do it
    /// (the sensors went quiet): the tables' readers are never more than that behind.
    /// Acknowledged outbox rows with nothing left to fold (the sensors are quiet, no fold will
    /// come) are deleted now, in a commit of their own as without the journal.
    public func foldJournalIfDue() {
        guard ring.isLoaded, ring.isDue() || (ring.pending.isEmpty && !acknowledgedUndeleted.isEmpty) else { return }
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
    public func journalStatus() -> JournalStatus { ring.status }

    // MARK: Inside a write's transaction

    /// The rows of a write not already stored or pending (a replay stores nothing: named by the
    /// keys of its kind, `SampleKind.keys`), as the journal's next window.
    func unseenRows(_ rows: SampleBatch) throws -> JournalEntry {
        var entry = JournalEntry(seq: ring.nextSeq)
        var seen: Set<SampleKey> = []
        for kindRows in rows.kinds {
            entry.rows.set(try kindRows.unseen(in: db, isSeen: { ring.holds($0) }, seen: &seen))
        }
        return entry
    }

    /// The end of the newest day with a stored aggregate (`IngestRing.mayHold`).
    func newestAggregateEnd() throws -> Int64 {
        let newest = try db.scalarText("SELECT max(date) FROM day_aggregate")
        return newest.flatMap { LocalDay($0, timeZone: dayTimeZone)?.boundsMs.end } ?? .min
    }

    /// Inserts the windows' rows into the indexed tables and records the last seq folded; the
    /// number of rows inserted. The caller's transaction.
    @discardableResult
    func fold(_ entries: [JournalEntry]) throws -> Int {
        guard let last = entries.last else { return 0 }
        var rows = SampleBatch()
        for entry in entries { rows.append(contentsOf: entry.rows) }
        let result = try insertRows(rows)
        try db.statement("UPDATE agent_state SET value = ? WHERE key = 'journal_folded'").bind(.integer(last.seq)).run()
        return result.rowsInserted
    }
}
