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
        guard !journalLoaded else { return }
        let folded = try db.scalarInt("SELECT value FROM agent_state WHERE key = 'journal_folded'") ?? 0
        var found: [(slot: Int, entry: JournalEntry)] = []
        journalFile = nil
        let filePath = Self.journalPath(of: path)
        if journalEnabled || FileManager.default.fileExists(atPath: filePath) {
            do {
                let file = try JournalFile(path: filePath, slots: IngestJournal.slots, syncsEachWrite: synchronous != "normal")
                let contents = try file.read()
                if contents.damaged > 0 {
                    logger.error("ingest journal slots fail their check (a write cut short by a power cut, or damage); skipped: their windows had not been reported stored", metadata: ["slots": "\(contents.damaged)"])
                }
                if !file.direct {
                    logger.notice("the filesystem refuses O_DIRECT: the ingest journal goes through the page cache", metadata: ["path": "\(filePath)"])
                }
                for (slot, body) in contents.bodies {
                    guard let entry = JournalEntry.decode(body) else {
                        logger.error("an ingest journal slot passed its check but cannot be read; its rows are lost", metadata: ["slot": "\(slot)"])
                        continue
                    }
                    if entry.seq > 0 { found.append((contents.isRing ? slot : -1, entry)) }
                }
                // Made (again) only after its windows were read: they are folded below either way.
                if !contents.isRing { try file.make() }
                if journalEnabled { journalFile = file }
            } catch {
                logger.error("cannot use the ingest journal file; windows go to the tables directly", metadata: ["error": "\(error)"])
            }
        }
        let hadTable = try legacyJournalExists()
        let legacy = hadTable ? try legacyJournalEntries() : []
        let newestSlot = found.filter { $0.slot >= 0 }.max { $0.entry.seq < $1.entry.seq }?.slot ?? -1
        let stored = found.map(\.entry) + legacy
        var fresh = IngestJournal(foldAfter: journal.foldAfter)
        fresh.resume(afterSlot: newestSlot, seq: max(folded, stored.map(\.seq).max() ?? 0))
        journal = fresh
        let entries = stored.filter { $0.seq > folded }.sorted { $0.seq < $1.seq }
        // Loaded once the leftovers are in the tables: while the fold fails (a full disk at
        // boot) every write tries again and fails, so no new window overwrites their slots.
        guard !entries.isEmpty || hadTable else {
            journalLoaded = true
            return
        }
        let rows = try db.transaction {
            let rows = try fold(entries)
            if hadTable { try db.execute("DROP TABLE ingest_journal") }
            return rows
        }
        journalLoaded = true
        if !entries.isEmpty {
            logger.notice("folded the ingest journal left by the last run", metadata: ["windows": "\(entries.count)", "rows": "\(rows)"])
        }
    }

    /// `<store>-ingest`: the ring of the store at `storePath`.
    static func journalPath(of storePath: String) -> String { storePath + "-ingest" }

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
        try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ingest_journal'") == 1
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
        makeRingAgainIfMoved()
    }

    /// After a fold (nothing pending): a ring file deleted or replaced at its path (a careless
    /// `rm`, a restore) is let go and a new one made by the next write. Until the fold the
    /// windows went to the file still open — safe from everything but a crash meanwhile.
    func makeRingAgainIfMoved() {
        guard let journalFile, journal.pending.isEmpty, !journalFile.isAtItsPath else { return }
        logger.warning("the ingest journal file was deleted or replaced; making it again", metadata: ["path": "\(journalFile.path)"])
        self.journalFile = nil
        journalLoaded = false
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
            enabled: journalEnabled && (journalFile != nil || !journalLoaded), pendingWindows: journal.pending.count, pendingRows: journal.pendingRows, folds: journal.folds,
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

    /// Writes `body` (an encoded window) to the ring's next slot, durably: one 4 KiB page.
    func writeSlot(_ body: [UInt8], to file: JournalFile) throws {
        try file.write(slot: journal.nextSlot, body: body)
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
