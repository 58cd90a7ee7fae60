import SensorBridge
/// Steps, cadence and distance from one foot pod's RSC measurements (0x2A53), folded one
/// notification at a time in time order and split into buckets on an epoch grid (15 minutes by
/// default: the timeline's buckets).
///
/// 0x2A53 has no step counter: steps are the integral of cadence over time. The rule is heart
/// rate's time weighting (`HeartRateAccumulator` in the agent): each sample stands for the time
/// until the next one; a gap longer than `dropoutMs` is a dropout and counts nothing; the newest
/// sample counts nothing yet. An interval that crosses a bucket boundary is split in proportion
/// to the time on each side. Distance over an interval is the total-distance delta when both
/// ends carry one (wrap and reset handled by `TotalDistanceDelta`), else speed × time.
///
/// Samples must come in time order for one sensor: an older one is refused (`add` returns
/// false, nothing changes) and the caller rebuilds from its store in order.
public struct CadenceStepAccumulator: Sendable {
    public let unit: CadenceUnit
    public let dropoutMs: Int64
    public let bucketMs: Int64

    public private(set) var samples = 0
    /// Total-distance readings that went backwards and were taken as a pod reset.
    public private(set) var distanceResets = 0
    /// Total-distance deltas no runner could cover in the interval (speed × time used instead).
    public private(set) var implausibleDistances = 0
    private var byStart: [Int64: StepBucket] = [:]
    private var last: (timeMs: Int64, stepsPerMinute: Int, speed: Double, totalDm: UInt32?)?

    public init(unit: CadenceUnit = .steps, dropoutMs: Int64, bucketMs: Int64 = 900_000) {
        precondition(dropoutMs > 0 && bucketMs > 0, "dropout and bucket length must be positive")
        self.unit = unit
        self.dropoutMs = dropoutMs
        self.bucketMs = bucketMs
    }

    /// The buckets with any data, oldest first.
    public var buckets: [StepBucket] { byStart.values.sorted { $0.startMs < $1.startMs } }

    /// All buckets added up (nil before any interval was counted or any sample seen).
    public var total: StepBucket? { StepBucket.combined(buckets) }

    /// Folds in one measurement taken at `timeMs`; false, and nothing changed, if it is older
    /// than one already added.
    public mutating func add(timeMs: Int64, measurement: RSCMeasurement) -> Bool {
        if let last, timeMs < last.timeMs { return false }
        samples += 1
        let stepsPerMinute = unit.stepsPerMinute(measurement.cadence)
        if stepsPerMinute > 0 {
            let start = gridStart(timeMs, length: bucketMs)
            var bucket = byStart[start] ?? StepBucket(startMs: start)
            bucket.maxCadence = max(bucket.maxCadence ?? stepsPerMinute, stepsPerMinute)
            byStart[start] = bucket
        }
        if let last {
            let gap = timeMs - last.timeMs
            if gap > 0 && gap <= dropoutMs {
                count(from: last, toMs: timeMs, newTotalDm: measurement.totalDistanceDm)
            }
        }
        last = (timeMs, stepsPerMinute, measurement.speedMetresPerSecond, measurement.totalDistanceDm)
        return true
    }

    private mutating func count(
        from start: (timeMs: Int64, stepsPerMinute: Int, speed: Double, totalDm: UInt32?), toMs end: Int64,
        newTotalDm: UInt32?
    ) {
        let gap = end - start.timeMs
        var metres = start.speed * Double(gap) / 1000
        if let old = start.totalDm, let new = newTotalDm {
            let delta = TotalDistanceDelta(from: old, to: new, overMs: gap)
            switch delta {
            case .reset: distanceResets += 1
            case .implausible: implausibleDistances += 1
            case .forward, .wrapped: break
            }
            metres = delta.metres ?? metres
        }
        var from = start.timeMs
        while from < end {
            let bucketStart = gridStart(from, length: bucketMs)
            let to = min(end, bucketStart + bucketMs)
            let share = to - from
            var bucket = byStart[bucketStart] ?? StepBucket(startMs: bucketStart)
            bucket.coveredMs += share
            if start.stepsPerMinute > 0 {
                bucket.steps += Double(start.stepsPerMinute) * Double(share) / 60_000
                bucket.movingMs += share
            } else if start.speed > 0 {
                bucket.speedWithoutCadenceMs += share
            }
            bucket.distanceM += metres * Double(share) / Double(gap)
            byStart[bucketStart] = bucket
            from = to
        }
    }
}
