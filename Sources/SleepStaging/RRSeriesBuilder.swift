/// One Heart Rate Measurement (0x2A37) notification as the agent stores it: its time and the RR
/// intervals it carried, oldest first, in 1/1024 s as the strap sent them.
public struct HeartRateNotification: Sendable, Equatable {
    /// Unix time of the notification, ms.
    public var timeMs: Int64
    /// RR intervals in 1/1024 s, oldest first.
    public var rr1024: [Int]
    /// False for a notification the agent judged invalid (no skin contact, 0 bpm, …): it breaks
    /// the chain of adjacent beats like a gap does.
    public var valid: Bool

    public init(timeMs: Int64, rr1024: [Int], valid: Bool = true) {
        self.timeMs = timeMs
        self.rr1024 = rr1024
        self.valid = valid
    }
}

/// Rebuilds a night's beat times from a strap's notifications, for sleepecg's features.
///
/// A strap reports each RR interval exactly (1/1024 s) but only says roughly when: a notification
/// comes about once a second with the beats since the last one, so its time is up to a second or
/// more after its last beat ended (the agent stores them as if that beat ended at the notification
/// time). The spectral features need beat-to-beat timing (respiration is 0.15–0.4 Hz), so beats are
/// placed by adding up the intervals, in *runs* of adjacent beats. A run is anchored piece by piece:
/// the beats carried by the notifications of one 5-minute slot of the clock (`blockMs`) are
/// placed where none of them ends after the notification that carried it — the anchor is the
/// earliest `notification time − intervals so far` over that slot's notifications (the
/// least-delayed one), the intervals added up from the slot's own first beat.
///
/// Why by slot and not over the whole run: a run can last all night, and an anchor taken over all
/// of it moves whenever a later notification comes with less delay (or the strap's clock runs
/// fast against the Pi's), shifting every beat of the night. Then no epoch computed while the
/// night arrived could be kept (issue 32: compute each epoch once). A slot's beats depend only on
/// its own notifications, so once a slot is over its beats never move, not by a bit, whatever
/// arrives before or after it (a late backlog changes only the slots it lands in); and a
/// strap's clock drifting against the Pi's is corrected every 5 minutes instead of smeared over
/// the night. The first beat of each slot gets the time since the beat before as its interval (it
/// differs from the strap's by the two anchors' difference, a few ms), so that intervals and beat
/// times agree, as in sleepecg's recordings; a beat never ends before the one before it.
///
/// A run ends — and the unknown interval to the next run becomes NaN, as sleepecg treats a gap in
/// a recording's beats — when
/// - two notifications are more than `gapLimitMs` apart (the agent's dropout limit,
///   `hr.stall_timeout_s`, the same rule as its RMSSD),
/// - a notification is invalid, or its time goes backwards,
/// - or a notification arrives more than `maxDelayMs` later than the run's timing allows: beats
///   went unreported (a lost notification). Shorter losses cannot be told apart from the strap's
///   own reporting delay; they leave one wrong successive difference.
public struct RRSeriesBuilder: Sendable {
    public let gapLimitMs: Int64
    public let maxDelayMs: Int64

    private var runs: [Run] = []
    private var current = Run()
    private var lastTimeMs: Int64?
    private var firstNotificationMs: Int64?

    public init(gapLimitMs: Int64 = 10_000, maxDelayMs: Int64 = 2_500) {
        self.gapLimitMs = gapLimitMs
        self.maxDelayMs = maxDelayMs
    }

    /// Feeds notifications in time order (as the store returns them).
    public mutating func add(_ notification: HeartRateNotification) {
        add(timeMs: notification.timeMs, rr1024: notification.rr1024, valid: notification.valid)
    }

    /// The same from a notification's parts.
    public mutating func add(timeMs: Int64, rr1024: some Collection<Int>, valid: Bool) {
        append(timeMs: timeMs, rr1024: rr1024, valid: valid)
    }

    /// Notifications `range` of a compact series, in place (specialised here: a night is ~100 000
    /// of them).
    public mutating func add(_ series: NotificationSeries, _ range: Range<Int>) {
        for index in range {
            append(timeMs: series.timesMs[index], rr1024: series.rrSlice(at: index), valid: series.isValid(at: index))
        }
    }

    private mutating func append<Intervals: Collection>(timeMs: Int64, rr1024: Intervals, valid: Bool)
    where Intervals.Element: BinaryInteger {
        let time = Double(timeMs) / 1000
        if firstNotificationMs == nil { firstNotificationMs = timeMs }
        defer { lastTimeMs = timeMs }
        if let lastTimeMs, timeMs - lastTimeMs > gapLimitMs || timeMs < lastTimeMs {
            closeRun()
        }
        guard valid else {
            closeRun()
            return
        }
        guard !rr1024.isEmpty else { return }
        var total = 0.0
        for raw in rr1024 { total += Double(raw) / 1024 }
        if let last = current.blocks.last {
            // Where the run's timing puts this notification's last beat; much later means beats
            // went unreported.
            let expectedEnd = last.anchor + last.length + total
            if time - expectedEnd > Double(maxDelayMs) / 1000 { closeRun() }
        }
        let slot = timeMs >= 0 ? timeMs / Self.blockMs : (timeMs + 1) / Self.blockMs - 1
        if current.blocks.last?.slot != slot {
            current.blocks.append(Block(slot: slot, firstBeat: current.rr1024.count))
        }
        let last = current.blocks.count - 1
        for raw in rr1024 {
            let kept = Int32(clamping: raw)
            current.blocks[last].length += Run.seconds(kept)
            current.rr1024.append(kept)
        }
        current.blocks[last].anchor = min(current.blocks[last].anchor, time - current.blocks[last].length)
    }

    /// The clock slot whose notifications anchor their beats together (see the type's comment).
    public static let blockMs: Int64 = 300_000

    public mutating func add<Notifications: Sequence>(contentsOf notifications: Notifications)
    where Notifications.Element == HeartRateNotification {
        for notification in notifications { add(notification) }
    }

    /// The beats so far as a recording: its start is the first beat's start (its first interval
    /// began then), unless `startUnix` says otherwise (it must not be after the first beat).
    /// `onEpochGrid`: then moved onto the 30-s grid, as `alignedToEpochGrid()` moves it (the same
    /// arithmetic, bit for bit) without a second copy of the night's beat times.
    public func recording(
        startUnix: Double? = nil, utcOffsetSeconds: Int, subject: SubjectData = SubjectData(), onEpochGrid: Bool = false
    ) throws -> SleepRecording {
        var runs = runs
        if !current.rr1024.isEmpty { runs.append(current) }
        // Exactly the night's size: grown by appending, each would hold up to twice that.
        let count = runs.reduce(runs.count) { $0 + $1.rr1024.count }
        var intervals: [Double] = []
        var times: [Double] = []
        intervals.reserveCapacity(count)
        times.reserveCapacity(count)
        var previousEnd = -Double.infinity
        var firstBeat: Double?
        for (index, run) in runs.enumerated() {
            for (number, block) in run.blocks.enumerated() {
                let end = number + 1 < run.blocks.count ? run.blocks[number + 1].firstBeat : run.rr1024.count
                // Anchors are estimates: never let a run start, or a slot's first beat end,
                // before the beat before it ended.
                let anchor = number == 0
                    ? max(block.anchor, previousEnd + 0.001)
                    : max(block.anchor, previousEnd + 0.001 - Run.seconds(run.rr1024[block.firstBeat]))
                if number == 0 {
                    if index > 0 {
                        intervals.append(.nan)
                        times.append(anchor)
                    }
                    firstBeat = firstBeat ?? anchor
                }
                // The beats' offsets in the block, added up in the order `append` added them.
                var offset = 0.0
                for beat in block.firstBeat..<end {
                    let interval = Run.seconds(run.rr1024[beat])
                    offset += interval
                    let time = anchor + offset
                    // A slot's first beat gets the time since the beat before as its interval, so
                    // that intervals and beat times agree as sleepecg's do; if it had to be pushed
                    // later than its slot's notifications place it (beats that add up to more than
                    // the time they took), that interval is unknown.
                    let first = beat == block.firstBeat && number > 0
                    intervals.append(first ? (anchor > block.anchor ? .nan : time - previousEnd) : interval)
                    times.append(time)
                }
                previousEnd = times.last ?? previousEnd
            }
        }
        let firstBeatStart = firstBeat ?? firstNotificationMs.map { Double($0) / 1000 } ?? 0
        let start = startUnix ?? firstBeatStart
        guard start <= firstBeatStart else {
            throw SleepStagingError.invalidInput("recording start \(start) is after the first beat \(firstBeatStart)")
        }
        for index in times.indices { times[index] -= start }
        guard onEpochGrid else {
            let series = try RRSeries(intervals: intervals, endTimes: times)
            return SleepRecording(startUnix: start, utcOffsetSeconds: utcOffsetSeconds, rr: series, subject: subject)
        }
        let grid = SleepRecording.epochGrid(startUnix: start)
        for index in times.indices { times[index] += grid.shift }
        let series = try RRSeries(intervals: intervals, endTimes: times)
        return SleepRecording(startUnix: grid.start, utcOffsetSeconds: utcOffsetSeconds, rr: series, subject: subject)
    }

    private mutating func closeRun() {
        if !current.rr1024.isEmpty { runs.append(current) }
        current = Run()
    }

    /// Adjacent beats, anchored by clock slot. Each beat's interval is kept as the strap sent it
    /// (4 bytes, not two doubles of 16: issue 32); its end, as an offset from the start of its
    /// slot's first beat, is added up again when the recording is made.
    private struct Run: Sendable {
        /// 1/1024 s (0x2A37 sends uint16; clamped to `Int32` for what other callers pass).
        var rr1024: [Int32] = []
        var blocks: [Block] = []

        static func seconds(_ rr1024: Int32) -> Double { Double(rr1024) / 1024 }
    }

    /// The beats from `firstBeat` on (to the next block's) that one clock slot's notifications
    /// carried: `anchor + offset` is a beat's end. Its offsets add up from 0 at its own first beat,
    /// so beats before it (a gap filled later, a run joined) cannot change its times by a bit.
    private struct Block: Sendable {
        let slot: Int64
        let firstBeat: Int
        var anchor = Double.infinity
        var length = 0.0
    }
}
