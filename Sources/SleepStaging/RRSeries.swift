/// RR intervals with the time each one ended, in seconds since the recording start: the series
/// sleepecg derives from a night's heartbeat times (`rri = diff(heartbeat_times)`,
/// `rri_times = heartbeat_times[1:]`). NaN marks an interval that is not known (beats a strap did
/// not report between two runs of its data); sleepecg's own cleaning (0.3–2 s) is applied later,
/// by the feature extraction, not here.
public struct RRSeries: Sendable {
    /// Interval lengths in seconds (NaN: not known).
    public let intervals: [Double]
    /// When each interval ended, seconds since the recording start, strictly increasing.
    public let endTimes: [Double]

    /// - Throws: `SleepStagingError.invalidInput` if the counts differ or a time is not finite or
    ///   not later than the one before.
    public init(intervals: [Double], endTimes: [Double]) throws {
        guard intervals.count == endTimes.count else {
            throw SleepStagingError.invalidInput("\(intervals.count) intervals but \(endTimes.count) times")
        }
        for index in endTimes.indices {
            guard endTimes[index].isFinite else { throw SleepStagingError.invalidInput("time \(index) is not finite") }
            if index > 0, endTimes[index] <= endTimes[index - 1] {
                throw SleepStagingError.invalidInput("time \(index) (\(endTimes[index]) s) is not after the one before")
            }
        }
        self.intervals = intervals
        self.endTimes = endTimes
    }

    /// sleepecg's own input: heartbeat times in seconds since the recording start, increasing.
    /// The intervals are their differences, exactly as sleepecg computes them.
    public init(heartbeatTimes: [Double]) throws {
        guard heartbeatTimes.count >= 2 else {
            try self.init(intervals: [], endTimes: [])
            return
        }
        let intervals = (1..<heartbeatTimes.count).map { heartbeatTimes[$0] - heartbeatTimes[$0 - 1] }
        try self.init(intervals: intervals, endTimes: Array(heartbeatTimes.dropFirst()))
    }

    /// No beats: what a recording keeps once its epochs' features are made, for the network needs
    /// only its start and subject (`SleepEpochCache`; issue 32).
    public static let none = RRSeries(checkedIntervals: [], endTimes: [])

    private init(checkedIntervals intervals: [Double], endTimes: [Double]) {
        self.intervals = intervals
        self.endTimes = endTimes
    }

    /// The time the last interval ended: sleepecg's record duration when it has no sleep stages.
    public var duration: Double { endTimes.last ?? 0 }

    /// Number of 30-s epochs sleepecg classifies: `int(record_duration // 30)`, with Python's
    /// float floor division (exact where `duration / 30` would round up to a whole number).
    public var epochCount: Int {
        guard duration > 0 else { return 0 }
        let length = Double(SleepEpoch.seconds)
        let remainder = duration.truncatingRemainder(dividingBy: length)
        let quotient = (duration - remainder) / length
        var floored = quotient.rounded(.down)
        if quotient - floored > 0.5 { floored += 1 }
        return Int(floored)
    }
}

public enum SleepStagingError: Error, Equatable, CustomStringConvertible {
    case invalidInput(String)

    public var description: String {
        switch self {
        case .invalidInput(let reason): "sleep staging input: \(reason)"
        }
    }
}
