import Store

/// The samples workout detection looks at: from `fromMs` (a moment no workout was going on) to
/// the newest, plus 5 minutes before it for context (a heart-rate rise), as compact samples.
/// While nothing is going on it keeps only the last `idleKeepMs`; a row older than `fromMs` (a
/// backlog, a replay) moves `fromMs` back to it and reloads from the store.
struct WorkoutWindow: Sendable {
    let detector: WorkoutDetector
    private(set) var fromMs: Int64 = 0
    /// The newest fix and heart-rate sample: each stream's own time (a strap's backlog can be far ahead of the GPS).
    private(set) var newestMotionMs: Int64?
    private(set) var newestPulseMs: Int64?
    private var motion: [MotionSample] = []
    /// Whether any fix here has the receiver's time: then fixes stamped with the system's time are
    /// left out. They are the odd ones (a first report without a time; a log replayed long after,
    /// whose first fix gets "now" before the clock rule has seen its time) and would mix two time
    /// bases: one fix at "now" among a replayed morning ends every workout of that morning early.
    /// A receiver whose time is never plausible (week rollover) has only system-timed fixes: used.
    private var anyGPSTimed = false
    private var pulse: [PulseSample] = []
    private(set) var hasOpenSession = false
    /// Samples the window's buffers have room for: what it holds in memory (tests).
    var capacity: Int { motion.capacity + pulse.capacity }
    var count: Int { motion.count + pulse.count }

    static let contextMs = WorkoutDetector.riseLookbackMs
    static let idleKeepMs: Int64 = 15 * 60_000
    static let backlogLookbackMs: Int64 = 3_600_000
    /// A stream more than this behind the other is taken to have stopped (a strap off for the day).
    static let streamStopMs: Int64 = 6 * 3_600_000

    /// Where both streams have got to: the slower one, unless it stopped long before the other.
    static func slowest(_ motionMs: Int64?, _ pulseMs: Int64?) -> Int64? {
        guard let motionMs, let pulseMs else { return motionMs ?? pulseMs }
        let newest = max(motionMs, pulseMs)
        return max(min(motionMs, pulseMs), newest - streamStopMs)
    }

    init(detector: WorkoutDetector) { self.detector = detector }

    /// Reads through a `StoreReader`, as the day's computation does: the rows up to `cursor` are
    /// committed, so its snapshot holds them, and reading them never holds up the writer.
    mutating func load(fromMs: Int64, reader: StoreReader, upTo cursor: RowCursor) throws {
        self.fromMs = fromMs
        var motion: [MotionSample] = []
        var pulse: [PulseSample] = []
        try reader.read { reads in
            try reads.forEachFix(fromMs: fromMs - Self.contextMs, toMs: .max, upTo: cursor) { motion.append(MotionSample($0)) }
            try reads.forEachHeartRate(fromMs: fromMs - Self.contextMs, toMs: .max, upTo: cursor) {
                if $0.valid { pulse.append(PulseSample(timeMs: $0.timeMs, bpm: $0.bpm)) }
            }
        }
        self.motion = motion
        self.pulse = pulse
        anyGPSTimed = motion.contains(where: \.gpsTimed)
        newestMotionMs = usableMotion.last?.timeMs
        newestPulseMs = pulse.last?.timeMs
    }

    /// Takes in new rows: whether fixes and heart-rate samples were added.
    mutating func add(
        fixes: [StoredFix], heartRates: [StoredHeartRate], reader: StoreReader, upTo cursor: RowCursor
    ) throws -> (motion: Bool, pulse: Bool) {
        let valid = heartRates.filter(\.valid)
        let added = (motion: !fixes.isEmpty, pulse: !valid.isEmpty)
        guard added.motion || added.pulse else { return added }
        let earliest = min(fixes.map(\.timeMs).min() ?? .max, valid.map(\.timeMs).min() ?? .max)
        if earliest < fromMs {
            // Older than the window (a backlog of the past): look again from well before it, so
            // a workout it belongs to is seen from its start.
            try load(fromMs: earliest - Self.backlogLookbackMs, reader: reader, upTo: cursor)
            return added
        }
        let motionInOrder = fixes.first.map { $0.timeMs >= (motion.last?.timeMs ?? .min) } ?? true
        let pulseInOrder = valid.first.map { $0.timeMs >= (pulse.last?.timeMs ?? .min) } ?? true
        motion += fixes.map(MotionSample.init)
        if fixes.contains(where: { $0.timeSource == "gps" }) { anyGPSTimed = true }
        pulse += valid.map { PulseSample(timeMs: $0.timeMs, bpm: $0.bpm) }
        if !motionInOrder || !fixes.isSorted(by: \.timeMs) { motion.sort { $0.timeMs < $1.timeMs } }
        if !pulseInOrder || !valid.isSorted(by: \.timeMs) { pulse.sort { $0.timeMs < $1.timeMs } }
        newestMotionMs = usableMotion.last?.timeMs
        newestPulseMs = pulse.last?.timeMs
        return added
    }

    private var usableMotion: [MotionSample] { anyGPSTimed ? motion.filter(\.gpsTimed) : motion }

    mutating func sessions(horizon: WorkoutDetector.Horizon) -> [WorkoutDetector.Session] {
        let found = detector.sessions(motion: usableMotion, pulse: pulse, fromMs: fromMs, horizon: horizon)
        hasOpenSession = found.contains { !$0.finished }
        return found
    }

    /// Moves the window past what is settled: finished sessions, and idle time but the last
    /// `idleKeepMs`; never past the start of an open session.
    mutating func settle(after sessions: [WorkoutDetector.Session], notBefore manualEndMs: Int64? = nil) {
        var next = fromMs
        // Finished sessions come first: settle up to the last one before anything still open.
        if let finished = sessions.prefix(while: \.finished).last { next = max(next, finished.lastActiveMs + 1) }
        if let open = sessions.first(where: { !$0.finished }) {
            next = min(max(next, fromMs), open.startMs)
        } else if let idleMs = Self.slowest(newestMotionMs, newestPulseMs) {
            next = max(next, idleMs - Self.idleKeepMs)
        }
        if let manualEndMs { next = max(next, manualEndMs + 1) }
        guard next > fromMs else { return }
        fromMs = next
        let keepFrom = fromMs - Self.contextMs
        motion = Self.samples(motion, from: keepFrom, time: \.timeMs)
        pulse = Self.samples(pulse, from: keepFrom, time: \.timeMs)
    }

    /// The samples from `keepFrom` on, in a buffer of their own size. `removeFirst` would keep the
    /// buffer, and each append grows it from there: a window of twenty minutes held the capacity
    /// of 150 000 samples (2.3 MiB, twice over while a copy was being appended to) after a
    /// million-notification backlog (heaptrack, issue 32).
    private static func samples<Sample>(_ samples: [Sample], from keepFrom: Int64, time: (Sample) -> Int64) -> [Sample] {
        guard let cut = samples.firstIndex(where: { time($0) >= keepFrom }) else { return [] }
        return cut == 0 ? samples : Array(samples[cut...])
    }
}

extension Array {
    fileprivate func isSorted(by key: (Element) -> Int64) -> Bool {
        zip(self, dropFirst()).allSatisfy { key($0) <= key($1) }
    }
}
