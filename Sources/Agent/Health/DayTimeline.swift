import Foundation
import Store

/// A local day in 15-minute buckets (96; 92 or 100 on a day the clocks change), for the query's
/// `"include": ["timeline"]` and the timeline CSV: per bucket the steps, the heart rate
/// (mean, min, max of the valid samples), and GPS distance and moving time by the day's own rules
/// (`DistanceFilter`, `LocationAccumulator`), so the buckets add up to the day's figures.
///
/// Every zone's offset is a whole number of quarter hours, so local quarter hours are the UTC
/// 15-minute grid the step buckets use.
struct DayTimeline {
    struct Bucket: Sendable {
        var startMs: Int64
        var steps: Int?
        var heartRate: (count: Int, sum: Int, min: Int, max: Int)?
        var fixes = 0
        var distanceM = 0.0
        var movingMs: Int64 = 0
    }

    let day: LocalDay
    private(set) var buckets: [Bucket]
    private var filter = DistanceFilter()
    private var lastFix: StoredFix?
    private var steps: StepsAccumulator
    private var stepsFolded = false

    static let bucketMs = StepsAccumulator.bucketMs

    init(day: LocalDay, steps settings: StepSettings) {
        self.day = day
        let bounds = day.boundsMs
        buckets = stride(from: bounds.start, to: bounds.end, by: Int(Self.bucketMs)).map { Bucket(startMs: $0) }
        steps = StepsAccumulator(settings: settings)
    }

    private func index(_ timeMs: Int64) -> Int? {
        let offset = timeMs - day.boundsMs.start
        guard offset >= 0 else { return nil }
        let index = Int(offset / Self.bucketMs)
        return index < buckets.count ? index : nil
    }

    /// Fixes in time order.
    mutating func add(_ fix: StoredFix) {
        guard let index = index(fix.timeMs) else { return }
        let before = filter.distanceM
        filter.add(fix)
        buckets[index].fixes += 1
        buckets[index].distanceM += filter.distanceM - before
        if let last = lastFix, let speed = fix.speed, let previous = last.speed,
            min(speed, previous) >= DistanceFilter.movingSpeedMps, fix.timeMs - last.timeMs <= LocationAccumulator.movingGapLimitMs
        {
            buckets[index].movingMs += fix.timeMs - last.timeMs
        }
        lastFix = fix
    }

    mutating func add(_ sample: StoredHeartRate) {
        guard sample.valid, let index = index(sample.timeMs) else { return }
        if let figures = buckets[index].heartRate {
            buckets[index].heartRate = (figures.count + 1, figures.sum + sample.bpm, min(figures.min, sample.bpm), max(figures.max, sample.bpm))
        } else {
            buckets[index].heartRate = (1, sample.bpm, sample.bpm, sample.bpm)
        }
    }

    /// Step records in time order (as the store reads them).
    mutating func add(_ record: StoredStepRecord) {
        _ = steps.add(record)
        stepsFolded = false
    }

    /// Puts each bucket's whole steps in place (they add up to the day's `steps`).
    private mutating func foldSteps() {
        guard !stepsFolded else { return }
        let rounded = steps.roundedSteps
        for index in buckets.indices { buckets[index].steps = rounded[buckets[index].startMs] }
        stepsFolded = true
    }

    /// The timeline as the reply's array of buckets.
    mutating func json() -> JSONValue {
        foldSteps()
        return .array(buckets.map { bucket in
            .object([
                ("from", .string(ISO8601.formatLocal(Date(unixMs: bucket.startMs), timeZone: day.timeZone))),
                ("steps", .number(bucket.steps)),
                ("hr", bucket.heartRate.map { .object([("avg", .number(Double($0.sum) / Double($0.count), digits: 1)), ("min", .number($0.min)), ("max", .number($0.max))]) } ?? .null),
                ("distance_m", bucket.fixes > 0 ? .number(bucket.distanceM, digits: 1) : .null),
                ("moving_s", bucket.fixes > 0 ? .int((bucket.movingMs + 500) / 1000) : .null),
            ])
        })
    }

    static let csvHeader = "from,steps,hr_avg,hr_min,hr_max,distance_m,moving_s\n"

    /// One CSV row per bucket, empty cells where the JSON has null.
    mutating func csv() -> String {
        foldSteps()
        return buckets.map { bucket in
            let heartRate = bucket.heartRate.map { "\(String(format: "%.1f", Double($0.sum) / Double($0.count))),\($0.min),\($0.max)" } ?? ",,"
            let moving = bucket.fixes > 0 ? "\(String(format: "%.1f", bucket.distanceM)),\((bucket.movingMs + 500) / 1000)" : ","
            return "\(ISO8601.formatLocal(Date(unixMs: bucket.startMs), timeZone: day.timeZone)),\(bucket.steps.map(String.init) ?? ""),\(heartRate),\(moving)\n"
        }.joined()
    }

    /// The day read from the store.
    static func build(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader) throws -> DayTimeline {
        let bounds = day.boundsMs
        var timeline = DayTimeline(day: day, steps: settings.steps)
        try reader.read { reads in try reads.forEachFix(fromMs: bounds.start, toMs: bounds.end) { timeline.add($0) } }
        try reader.read { reads in try reads.forEachHeartRate(fromMs: bounds.start, toMs: bounds.end) { timeline.add($0) } }
        try reader.read { reads in try reads.forEachStepRecord(fromMs: bounds.start, toMs: bounds.end) { timeline.add($0) } }
        return timeline
    }
}
