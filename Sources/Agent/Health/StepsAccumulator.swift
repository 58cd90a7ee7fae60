import SensorBridge
import StepCounting
import Store

/// The steps part of a day's aggregate, and the step figures of its 15-minute timeline buckets,
/// folded one step record at a time.
///
/// Two sources (docs/steps.md): a foot pod's cadence, integrated over time
/// (`CadenceStepAccumulator`), and step windows counted from a chest strap's accelerometer
/// (estimated). Each 15-minute bucket takes one source, so a foot pod and a strap worn together
/// never add up the same steps: the foot pod where it covered any of the bucket, else the strap.
/// Within a source, two sensors covering the same bucket (two pods, two straps) give the larger
/// count, not the sum. The day is the sum of its buckets.
struct StepsAccumulator: Sendable {
    static let bucketMs: Int64 = 900_000

    let settings: StepSettings
    /// Records folded in; with none the day's steps are null, with some a real count (0 included).
    private(set) var records = 0
    /// RSC values that no longer parse (bit rot on the card): left out, counted.
    private(set) var unreadable = 0
    private var footPods: [String: CadenceStepAccumulator] = [:]
    private var straps: [String: [Int64: StepBucket]] = [:]

    init(settings: StepSettings) { self.settings = settings }

    /// False, and nothing changed, for an RSC notification older than one already added for its
    /// sensor (the day must be rebuilt in time order). Accelerometer windows add in any order.
    mutating func add(_ record: StoredStepRecord) -> Bool {
        switch record.kind {
        case .rsc:
            guard case .success(let measurement) = RSCMeasurement.parse(record.raw) else {
                unreadable += 1
                return true
            }
            var pod = footPods[record.sensor]
                ?? CadenceStepAccumulator(unit: settings.unit(for: record.sensor), dropoutMs: settings.dropoutMs, bucketMs: Self.bucketMs)
            guard pod.add(timeMs: record.timeMs, measurement: measurement) else { return false }
            footPods[record.sensor] = pod
        case .accelerometer:
            let start = Self.bucketStart(record.timeMs)
            var bucket = straps[record.sensor, default: [:]][start] ?? StepBucket(startMs: start)
            let steps = record.steps ?? 0
            let covered = max(record.coveredMs ?? 0, 0)
            bucket.steps += Double(steps)
            bucket.coveredMs += covered
            if steps > 0 && covered > 0 {
                bucket.movingMs += covered
                let cadence = Int((Double(steps) * 60_000 / Double(covered)).rounded())
                bucket.maxCadence = max(bucket.maxCadence ?? cadence, cadence)
            }
            straps[record.sensor, default: [:]][start] = bucket
        }
        records += 1
        return true
    }

    /// Which source a bucket's steps came from.
    enum Source: String, Sendable {
        case rsc
        case accelerometer
    }

    /// The figures of each bucket with any step data, by bucket start, with their source.
    var buckets: [Int64: (bucket: StepBucket, source: Source)] {
        var chosen: [Int64: (bucket: StepBucket, source: Source)] = [:]
        for (source, perSensor) in [(Source.accelerometer, Array(straps.values)), (.rsc, footPods.values.map(Self.byStart))] {
            for sensorBuckets in perSensor {
                for (start, bucket) in sensorBuckets where bucket.coveredMs > 0 || bucket.maxCadence != nil {
                    if let current = chosen[start], current.source == source, current.bucket.steps >= bucket.steps { continue }
                    // The foot pod wins a bucket it covered; a strap only fills what no pod covered.
                    if let current = chosen[start], current.source == .rsc, source == .accelerometer { continue }
                    chosen[start] = (bucket, source)
                }
            }
        }
        return chosen
    }

    /// What was left out or replaced while counting, by reason, for the log: stored RSC values
    /// that no longer parse (bit rot), foot-pod distance counters that went backwards (a pod
    /// reset), and distance deltas no runner could cover (speed × time used instead).
    var anomalies: [(reason: String, count: Int)] {
        [
            ("unreadable_rsc", unreadable),
            ("pod_distance_reset", footPods.values.reduce(0) { $0 + $1.distanceResets }),
            ("implausible_pod_distance", footPods.values.reduce(0) { $0 + $1.implausibleDistances }),
        ].filter { $0.1 > 0 }
    }

    /// Whole steps per bucket start, adding up to the day's rounded total.
    var roundedSteps: [Int64: Int] {
        let chosen = buckets.sorted { $0.key < $1.key }
        let whole = StepBucket.roundedSteps(chosen.map(\.value.bucket))
        return Dictionary(uniqueKeysWithValues: zip(chosen.map(\.key), whole))
    }

    /// `steps`, `steps_source`, `steps_estimated`, `cadence` and `rsc_distance_m` of the payload:
    /// null where no step sensor delivered anything that day.
    var fields: [(String, JSONValue)] {
        guard records > 0 else {
            return [("steps", .null), ("steps_source", .null), ("steps_estimated", .null), ("cadence", .null), ("rsc_distance_m", .null)]
        }
        let chosen = Array(buckets.values)
        let sources = Set(chosen.map(\.source))
        let total = StepBucket.combined(chosen.map(\.bucket))
        let source: JSONValue =
            switch (sources.contains(.rsc), sources.contains(.accelerometer)) {
            case (true, true): .string("rsc+accelerometer")
            case (true, false): .string(Source.rsc.rawValue)
            case (false, true): .string(Source.accelerometer.rawValue)
            case (false, false): .null
            }
        let podBuckets = chosen.filter { $0.source == .rsc }.map(\.bucket)
        let cadence: JSONValue =
            if let total, let average = total.averageCadence {
                .object([("avg", .number(average, digits: 1)), ("max", .number(total.maxCadence))])
            } else {
                .null
            }
        return [
            ("steps", .int(Int64((total?.steps ?? 0).rounded()))),
            ("steps_source", source),
            ("steps_estimated", .bool(sources.contains(.accelerometer))),
            ("cadence", cadence),
            ("rsc_distance_m", podBuckets.isEmpty ? .null : .number(podBuckets.reduce(0) { $0 + $1.distanceM }, digits: 1)),
        ]
    }

    static func bucketStart(_ timeMs: Int64) -> Int64 {
        LocationAccumulator.floorDivide(timeMs, bucketMs) * bucketMs
    }

    private static func byStart(_ pod: CadenceStepAccumulator) -> [Int64: StepBucket] {
        Dictionary(uniqueKeysWithValues: pod.buckets.map { ($0.startMs, $0) })
    }
}
