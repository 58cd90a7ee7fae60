import Store

/// The samples workout detection looks at: from `fromMs` (a moment no workout was going on) to
/// the newest, plus 5 minutes before it for context (a heart-rate rise), as compact samples.
/// While nothing is going on it keeps only the last `idleKeepMs`; a row older than `fromMs` (a
/// backlog, a replay) moves `fromMs` back to it and reloads from the store.
struct WorkoutWindow: Sendable {
    let detector: WorkoutDetector
    private(set) var fromMs: Int64 = 0
    private(set) var newestMs: Int64?
    private var motion: [MotionSample] = []
    private var pulse: [PulseSample] = []
    private(set) var hasOpenSession = false

    static let contextMs = WorkoutDetector.riseLookbackMs
    static let idleKeepMs: Int64 = 15 * 60_000

    init(detector: WorkoutDetector) { self.detector = detector }

    mutating func load(fromMs: Int64, store: Store, upTo cursor: RowCursor) async throws {
        self.fromMs = fromMs
        var motion: [MotionSample] = []
        var pulse: [PulseSample] = []
        try await store.forEachFix(fromMs: fromMs - Self.contextMs, toMs: .max, upTo: cursor) { motion.append(MotionSample($0)) }
        try await store.forEachHeartRate(fromMs: fromMs - Self.contextMs, toMs: .max, upTo: cursor) {
            if $0.valid { pulse.append(PulseSample(timeMs: $0.timeMs, bpm: $0.bpm)) }
        }
        self.motion = motion
        self.pulse = pulse
        newestMs = max(motion.last?.timeMs ?? .min, pulse.last?.timeMs ?? .min)
        if newestMs == .min { newestMs = nil }
    }

    /// Takes in new rows; true when any were added.
    mutating func add(fixes: [StoredFix], heartRates: [StoredHeartRate], store: Store, upTo cursor: RowCursor) async throws -> Bool {
        let valid = heartRates.filter(\.valid)
        guard !fixes.isEmpty || !valid.isEmpty else { return false }
        let earliest = min(fixes.map(\.timeMs).min() ?? .max, valid.map(\.timeMs).min() ?? .max)
        if earliest < fromMs {
            // Older than the window: look at everything from there again.
            try await load(fromMs: earliest, store: store, upTo: cursor)
            return true
        }
        let motionInOrder = fixes.first.map { $0.timeMs >= (motion.last?.timeMs ?? .min) } ?? true
        let pulseInOrder = valid.first.map { $0.timeMs >= (pulse.last?.timeMs ?? .min) } ?? true
        motion += fixes.map(MotionSample.init)
        pulse += valid.map { PulseSample(timeMs: $0.timeMs, bpm: $0.bpm) }
        if !motionInOrder || !fixes.isSorted(by: \.timeMs) { motion.sort { $0.timeMs < $1.timeMs } }
        if !pulseInOrder || !valid.isSorted(by: \.timeMs) { pulse.sort { $0.timeMs < $1.timeMs } }
        newestMs = max(newestMs ?? .min, motion.last?.timeMs ?? .min, pulse.last?.timeMs ?? .min)
        return true
    }

    mutating func sessions(horizonMs: Int64) -> [WorkoutDetector.Session] {
        let found = detector.sessions(motion: motion, pulse: pulse, fromMs: fromMs, horizonMs: horizonMs)
        hasOpenSession = found.contains { !$0.finished }
        return found
    }

    /// Moves the window past what is settled: finished sessions, and idle time but the last
    /// `idleKeepMs`; never past the start of an open session.
    mutating func settle(after sessions: [WorkoutDetector.Session], notBefore manualEndMs: Int64? = nil) {
        var next = fromMs
        if let finished = sessions.last(where: \.finished) { next = max(next, finished.lastActiveMs + 1) }
        if let open = sessions.first(where: { !$0.finished }) {
            next = min(max(next, fromMs), open.startMs)
        } else if let newestMs {
            next = max(next, newestMs - Self.idleKeepMs)
        }
        if let manualEndMs { next = max(next, manualEndMs + 1) }
        guard next > fromMs else { return }
        fromMs = next
        let keepFrom = fromMs - Self.contextMs
        if let cut = motion.firstIndex(where: { $0.timeMs >= keepFrom }) { motion.removeFirst(cut) } else { motion.removeAll() }
        if let cut = pulse.firstIndex(where: { $0.timeMs >= keepFrom }) { pulse.removeFirst(cut) } else { pulse.removeAll() }
    }
}

extension Array {
    fileprivate func isSorted(by key: (Element) -> Int64) -> Bool {
        zip(self, dropFirst()).allSatisfy { key($0) <= key($1) }
    }
}
