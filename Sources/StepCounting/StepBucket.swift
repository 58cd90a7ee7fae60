/// What one stretch of time (a 15-minute timeline bucket, or a whole day once buckets are
/// combined) holds of a step source. Times are Unix epoch milliseconds.
///
/// Steps from a foot pod are an integral, so they are fractional here; round once, at the
/// edge (`roundedSteps` keeps a day's buckets adding up to the day's rounded total).
public struct StepBucket: Sendable, Equatable {
    /// Start of the bucket on the epoch grid of the accumulator's bucket length.
    public var startMs: Int64
    public var steps: Double = 0
    /// Time covered by data (sample intervals no longer than the dropout).
    public var coveredMs: Int64 = 0
    /// Of `coveredMs`, the time with a cadence above zero.
    public var movingMs: Int64 = 0
    /// Of `coveredMs`, the time with speed but cadence zero: a sensor that measures no
    /// cadence at all (a treadmill belt sensor such as NPE Runn) shows up here.
    public var speedWithoutCadenceMs: Int64 = 0
    /// Highest cadence seen, in steps per minute, among samples with a cadence above zero.
    public var maxCadence: Int?
    /// Distance from the foot pod (total-distance deltas, else speed × time), metres.
    public var distanceM: Double = 0

    public init(startMs: Int64) { self.startMs = startMs }

    /// Mean cadence while moving, steps per minute: the steps over the moving time.
    public var averageCadence: Double? { movingMs > 0 ? steps * 60_000 / Double(movingMs) : nil }

    /// Adds `other`'s figures to these (the start stays this bucket's).
    public mutating func absorb(_ other: StepBucket) {
        steps += other.steps
        coveredMs += other.coveredMs
        movingMs += other.movingMs
        speedWithoutCadenceMs += other.speedWithoutCadenceMs
        distanceM += other.distanceM
        if let value = other.maxCadence { maxCadence = Swift.max(maxCadence ?? value, value) }
    }

    /// The buckets added up, starting at the first one's start (nil for none).
    public static func combined(_ buckets: some Sequence<StepBucket>) -> StepBucket? {
        var total: StepBucket?
        for bucket in buckets {
            if total == nil { total = StepBucket(startMs: bucket.startMs) }
            total?.absorb(bucket)
        }
        return total
    }

    /// Whole steps per bucket that add up to the rounded total (largest remainder), so a
    /// timeline and its day's `steps` never disagree by a rounding.
    public static func roundedSteps(_ buckets: [StepBucket]) -> [Int] {
        let total = Int(buckets.reduce(0) { $0 + $1.steps }.rounded())
        var whole = buckets.map { Int($0.steps.rounded(.down)) }
        let order = buckets.indices.sorted {
            let a = buckets[$0].steps - Double(whole[$0]), b = buckets[$1].steps - Double(whole[$1])
            return a != b ? a > b : $0 < $1
        }
        var missing = total - whole.reduce(0, +)
        for index in order where missing > 0 {
            whole[index] += 1
            missing -= 1
        }
        return whole
    }
}

/// Floor division for epoch grids (times before 1970 stay on the grid too).
func gridStart(_ timeMs: Int64, length: Int64) -> Int64 {
    let quotient = timeMs / length
    return (timeMs % length < 0 ? quotient - 1 : quotient) * length
}
