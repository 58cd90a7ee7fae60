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
/// placed by adding up the intervals, in *runs* of adjacent beats, and each run is anchored where
/// no beat of it ends after the notification that carried it: the anchor is the earliest
/// `notification time − intervals so far` over the run (the least-delayed notification).
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
            append(timeMs: series.timesMs[index], rr1024: series.rrSlice(at: index), valid: series.valid[index])
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
        let total = rr1024.reduce(0.0) { $0 + Double($1) / 1024 }
        if !current.offsets.isEmpty {
            let anchorHere = time - (current.length + total)
            if anchorHere - current.anchor > Double(maxDelayMs) / 1000 { closeRun() }
        }
        for raw in rr1024 {
            let seconds = Double(raw) / 1024
            current.length += seconds
            current.intervals.append(seconds)
            current.offsets.append(current.length)
        }
        current.anchor = min(current.anchor, time - current.length)
    }

    public mutating func add<Notifications: Sequence>(contentsOf notifications: Notifications)
    where Notifications.Element == HeartRateNotification {
        for notification in notifications { add(notification) }
    }

    /// The beats so far as a recording: its start is the first beat's start (its first interval
    /// began then), unless `startUnix` says otherwise (it must not be after the first beat).
    public func recording(
        startUnix: Double? = nil, utcOffsetSeconds: Int, subject: SubjectData = SubjectData()
    ) throws -> SleepRecording {
        var runs = runs
        if !current.offsets.isEmpty { runs.append(current) }
        var intervals: [Double] = []
        var times: [Double] = []
        var previousEnd = -Double.infinity
        for (index, run) in runs.enumerated() {
            // Two runs' anchors are estimates: never let one start before the previous ended.
            let anchor = max(run.anchor, previousEnd + 0.001)
            if index > 0 {
                intervals.append(.nan)
                times.append(anchor)
            }
            for (interval, offset) in zip(run.intervals, run.offsets) {
                intervals.append(interval)
                times.append(anchor + offset)
            }
            previousEnd = times.last ?? previousEnd
        }
        let firstBeat = runs.first.map { $0.anchor } ?? firstNotificationMs.map { Double($0) / 1000 } ?? 0
        let start = startUnix ?? firstBeat
        guard start <= firstBeat else {
            throw SleepStagingError.invalidInput("recording start \(start) is after the first beat \(firstBeat)")
        }
        let series = try RRSeries(intervals: intervals, endTimes: times.map { $0 - start })
        return SleepRecording(startUnix: start, utcOffsetSeconds: utcOffsetSeconds, rr: series, subject: subject)
    }

    private mutating func closeRun() {
        if !current.offsets.isEmpty { runs.append(current) }
        current = Run()
    }

    /// Adjacent beats: each interval's end as an offset from the run's first beat.
    private struct Run: Sendable {
        var intervals: [Double] = []
        var offsets: [Double] = []
        var length = 0.0
        var anchor = Double.infinity
    }
}
