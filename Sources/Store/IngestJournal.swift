/// What the store keeps in memory of its ingest journal (Store+Journal.swift): the windows
/// written to the ring but not yet folded into the indexed tables, in order, and the
/// keys of their rows, so a duplicate is recognised before it is written.
///
/// The ring is `slots` slots of `<store>-ingest` (JournalFile.swift), each written in place. The windows not yet
/// folded fill the slots from `firstSlot` on, in seq order; a fold moves their rows into `fix`,
/// `hr_sample`, `rr_interval` and `step_record` and records the last seq it took in
/// `agent_state` (`journal_folded`), which frees every slot at once without rewriting one.
struct IngestJournal {
    /// 128 slots: two minutes at the default one commit a second, past the default fold of 60 s.
    static let slots = 128

    struct HeartRateKey: Hashable {
        var sensor: String
        var timeMs: Int64
    }

    struct StepKey: Hashable {
        var sensor: String
        var kind: String
        var timeMs: Int64
    }

    /// A window waits at most this long (monotonic) before it is folded.
    let foldAfter: Duration
    private(set) var pending: [JournalEntry] = []
    private(set) var firstSlot = 0
    private(set) var nextSeq: Int64 = 1
    /// When the oldest pending window was written (monotonic: there may be no clock at boot).
    private(set) var oldestPendingAt: ContinuousClock.Instant?
    private var fixTimes: Set<Int64> = []
    private var heartRateKeys: Set<HeartRateKey> = []
    private var stepKeys: Set<StepKey> = []
    /// Folds done since start and rows moved, for `status.store.journal`.
    private(set) var folds = 0
    private(set) var foldedRows = 0

    /// The end of the newest day with a stored aggregate (nil: not read yet). Rows before it
    /// belong to a day a query may answer from its aggregate row, which must know of them in
    /// the same commit (schema 4): such a window goes to the tables, never to the journal.
    var aggregatedUntilMs: Int64?

    init(foldAfter: Duration) { self.foldAfter = foldAfter }

    var isFull: Bool { pending.count >= Self.slots }
    var nextSlot: Int { (firstSlot + pending.count) % Self.slots }
    var pendingRows: Int { pending.reduce(0) { $0 + $1.fixes.count + $1.heartRates.count + $1.steps.count } }

    func isDue(now: ContinuousClock.Instant) -> Bool {
        guard let oldestPendingAt else { return false }
        return isFull || now - oldestPendingAt >= foldAfter
    }

    func holds(fixAt timeMs: Int64) -> Bool { fixTimes.contains(timeMs) }
    func holds(_ key: HeartRateKey) -> Bool { heartRateKeys.contains(key) }
    func holds(_ key: StepKey) -> Bool { stepKeys.contains(key) }

    /// The window just written to `nextSlot`.
    mutating func append(_ entry: JournalEntry, now: ContinuousClock.Instant) {
        if pending.isEmpty { oldestPendingAt = now }
        pending.append(entry)
        nextSeq = entry.seq + 1
        for fix in entry.fixes { fixTimes.insert(fix.timeMs) }
        for sample in entry.heartRates { heartRateKeys.insert(HeartRateKey(sensor: sample.sensor, timeMs: sample.timeMs)) }
        for record in entry.steps { stepKeys.insert(StepKey(sensor: record.sensor, kind: record.kind.rawValue, timeMs: record.timeMs)) }
    }

    /// Every pending window is in the tables now.
    mutating func folded() {
        guard !pending.isEmpty else { return }
        folds += 1
        foldedRows += pendingRows
        firstSlot = nextSlot
        pending.removeAll(keepingCapacity: true)
        oldestPendingAt = nil
        fixTimes.removeAll(keepingCapacity: true)
        heartRateKeys.removeAll(keepingCapacity: true)
        stepKeys.removeAll(keepingCapacity: true)
    }

    /// Where the ring stands in a file just opened: after the slot of the highest seq.
    mutating func resume(afterSlot slot: Int, seq: Int64) {
        firstSlot = (slot + 1) % Self.slots
        nextSeq = seq + 1
    }
}
