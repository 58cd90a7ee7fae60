import Foundation
import Logging

/// The ingest journal's ring (docs/storage.md, "The ingest journal"), and the one owner of its
/// state: the file `<store>-ingest` (JournalFile.swift), where the next window goes, the
/// windows written but not yet folded into the indexed tables (in order, with the keys of their
/// rows, so a duplicate is recognised before it is written), whether the ring of the file now
/// open has been read, and the fold counters `status.store.journal` reports.
///
/// The `Store` actor holds one and calls it; nothing else changes its state. What needs SQL —
/// which rows are already in the tables, the fold's inserts, the table schema 7 kept windows
/// in — stays in the Store (Store+Journal.swift), which hands the ring the answers.
///
/// The ring is `slots` slots of the file, each written in place. The windows not yet folded
/// fill the slots from `firstSlot` on, in seq order; a fold moves their rows into their
/// kinds' tables (`SampleKinds`) and records the last seq it took in
/// `agent_state` (`journal_folded`), which frees every slot at once without rewriting one.
struct IngestRing {
    /// 128 slots: two minutes at the default one commit a second, past the default fold of 60 s.
    static let slots = 128

    /// Whether commit windows go to the ring or straight to the tables; the ring a previous run
    /// left is folded either way.
    let isEnabled: Bool
    /// A window waits at most this long (monotonic) before it is folded.
    let foldAfter: Duration
    /// `synchronous = "normal"`: like SQLite's WAL then, a slot is not synced by itself.
    private let syncsEachWrite: Bool
    /// The ring's file, open while the journal is on and usable (nil: windows go to the tables).
    private var file: JournalFile?
    /// The ring of the file now open has been read and its leftovers folded (`Store.loadJournalIfNeeded`).
    private(set) var isLoaded = false
    private(set) var pending: [JournalEntry] = []
    private var firstSlot = 0
    private(set) var nextSeq: Int64 = 1
    /// When the oldest pending window was written (monotonic: there may be no clock at boot).
    private var oldestPendingAt: ContinuousClock.Instant?
    /// The keys of the pending rows (`SampleKind.keys`): a row named by one is a replay.
    private var keys: Set<SampleKey> = []
    /// Folds done since the ring was read and rows moved, for `status.store.journal`.
    private var folds = 0
    private var foldedRows = 0
    /// The end of the newest day with a stored aggregate (nil: not read yet). Rows before it
    /// belong to a day a query may answer from its aggregate row, which must know of them in
    /// the same commit (schema 4): such a window goes to the tables, never to the ring.
    private var aggregatedUntilMs: Int64?

    /// `foldAfter` nil: the journal is off (windows go to the tables; a ring left by an earlier
    /// run is still read and folded).
    init(foldAfter: Duration?, syncsEachWrite: Bool) {
        isEnabled = foldAfter != nil
        self.foldAfter = foldAfter ?? .zero
        self.syncsEachWrite = syncsEachWrite
    }

    /// `<store>-ingest`: the ring of the store at `storePath`.
    static func path(of storePath: String) -> String { storePath + "-ingest" }

    /// Whether a window may be written to the ring now (it is on, and its file usable).
    var takesWindows: Bool { file != nil }
    var isFull: Bool { pending.count >= Self.slots }
    private var nextSlot: Int { (firstSlot + pending.count) % Self.slots }
    var pendingRows: Int { pending.reduce(0) { $0 + $1.rows.count } }

    /// Whether the oldest pending window has waited `foldAfter`, or every slot is taken.
    func isDue(now: ContinuousClock.Instant = .now) -> Bool {
        guard let oldestPendingAt else { return false }
        return isFull || now - oldestPendingAt >= foldAfter
    }

    func holds(_ key: SampleKey) -> Bool { keys.contains(key) }

    var status: JournalStatus {
        JournalStatus(
            enabled: isEnabled && (file != nil || !isLoaded), pendingWindows: pending.count, pendingRows: pendingRows, folds: folds,
            foldedRows: foldedRows)
    }

    // MARK: Reading the ring of a file just opened

    /// Opens and reads the ring of the store at `storePath`: its windows with a passing check,
    /// by slot (-1: read from a file of another size, which is made again as a ring). With the
    /// journal off the file is only read, if it is there, and not kept open. A ring that cannot
    /// be opened (another agent holds it, a read-only directory) leaves the journal off for this
    /// file: windows go to the tables, logged.
    mutating func open(storePath: String, logger: Logger) -> [(slot: Int, entry: JournalEntry)] {
        var found: [(slot: Int, entry: JournalEntry)] = []
        file = nil
        let filePath = Self.path(of: storePath)
        guard isEnabled || FileManager.default.fileExists(atPath: filePath) else { return found }
        do {
            let opened = try JournalFile(path: filePath, slots: Self.slots, syncsEachWrite: syncsEachWrite)
            let contents = try opened.read()
            if contents.damaged > 0 {
                logger.error("ingest journal slots fail their check (a write cut short by a power cut, or damage); skipped: their windows had not been reported stored", metadata: ["slots": "\(contents.damaged)"])
            }
            if !opened.direct {
                logger.notice("the filesystem refuses O_DIRECT: the ingest journal goes through the page cache", metadata: ["path": "\(filePath)"])
            }
            for (slot, body) in contents.bodies {
                guard let entry = JournalEntry.decode(body) else {
                    logger.error("an ingest journal slot passed its check but cannot be read; its rows are lost", metadata: ["slot": "\(slot)"])
                    continue
                }
                if entry.seq > 0 { found.append((contents.isRing ? slot : -1, entry)) }
            }
            // Made (again) only after its windows were read: they are folded either way.
            if !contents.isRing { try opened.make() }
            if isEnabled { file = opened }
        } catch {
            logger.error("cannot use the ingest journal file; windows go to the tables directly", metadata: ["error": "\(error)"])
        }
        return found
    }

    /// Starts the ring afresh after the slot of the highest seq found in it, past every seq
    /// stored or folded: nothing pending, the counters at zero. The windows still to fold
    /// (`found` and `legacy` past `folded`), in seq order.
    mutating func resume(found: [(slot: Int, entry: JournalEntry)], legacy: [JournalEntry], folded: Int64) -> [JournalEntry] {
        let newestSlot = found.filter { $0.slot >= 0 }.max { $0.entry.seq < $1.entry.seq }?.slot ?? -1
        let stored = found.map(\.entry) + legacy
        let kept = file
        self = IngestRing(foldAfter: isEnabled ? foldAfter : nil, syncsEachWrite: syncsEachWrite)
        file = kept
        firstSlot = (newestSlot + 1) % Self.slots
        nextSeq = max(folded, stored.map(\.seq).max() ?? 0) + 1
        return stored.filter { $0.seq > folded }.sorted { $0.seq < $1.seq }
    }

    /// The leftovers are in the tables: windows may be written.
    mutating func loaded() { isLoaded = true }

    /// The store opened another file (`Store.reopen`): its ring is read before the next write.
    mutating func unload() {
        file = nil
        isLoaded = false
    }

    // MARK: Writing and folding

    /// Whether every row lies in a day without a stored aggregate (today, live): only then may
    /// the window wait in the ring. `newestAggregateEnd` is asked once, then after every
    /// `dayAggregated`.
    mutating func mayHold(_ entry: JournalEntry, newestAggregateEnd: () throws -> Int64) rethrows -> Bool {
        if aggregatedUntilMs == nil { aggregatedUntilMs = try newestAggregateEnd() }
        let floor = aggregatedUntilMs ?? .max
        return entry.rows.allAtOrAfter(floor)
    }

    /// A new day has an aggregate: its late rows must not wait in the ring from now on.
    mutating func dayAggregated() { aggregatedUntilMs = nil }

    /// Writes the window to the next slot, durably (one 4 KiB page), and keeps it pending; false
    /// (nothing written) when it does not fit a slot.
    mutating func append(_ entry: JournalEntry) throws -> Bool {
        guard let file, let body = entry.encode() else { return false }
        try file.write(slot: nextSlot, body: body)
        if pending.isEmpty { oldestPendingAt = .now }
        pending.append(entry)
        nextSeq = entry.seq + 1
        for kindRows in entry.rows.kinds { keys.formUnion(kindRows.keys()) }
        return true
    }

    /// Every pending window is in the tables now (the fold's transaction committed).
    mutating func folded() {
        guard !pending.isEmpty else { return }
        folds += 1
        foldedRows += pendingRows
        firstSlot = nextSlot
        pending.removeAll(keepingCapacity: true)
        oldestPendingAt = nil
        keys.removeAll(keepingCapacity: true)
    }

    /// After a fold (nothing pending): a ring file deleted or replaced at its path (a careless
    /// `rm`, a restore) is let go, and a new one made by the next write; its path, when it was.
    /// Until the fold the windows went to the file still open — safe from everything but a
    /// crash meanwhile.
    mutating func letGoIfMoved() -> String? {
        guard let file, pending.isEmpty, !file.isAtItsPath else { return nil }
        unload()
        return file.path
    }
}
