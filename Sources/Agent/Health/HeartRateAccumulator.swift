import Store

/// The heart-rate part of a day's health aggregate, folded one notification at a time in time
/// order, so the running day never has to be read again.
///
/// Time weighting: each valid sample stands for the time until the next valid one, so a strap
/// notifying faster in one hour does not outweigh a slower one. A gap longer than `gapLimitMs`
/// (`hr.stall_timeout_s`) is a dropout and carries no weight; the newest sample carries none
/// yet. `coveredMs` is the weighted time; zone time is weighted the same way. Invalid samples
/// (0 bpm, no skin contact, implausible) are counted in `samples` only.
struct HeartRateAccumulator: Sendable, Codable {
    let gapLimitMs: Int64
    let zones: HeartRateZones

    private(set) var samples = 0
    private(set) var validSamples = 0
    private(set) var min: Int?
    private(set) var max: Int?
    private(set) var coveredMs: Int64 = 0
    private(set) var zoneMs: [Int64] = Array(repeating: 0, count: 5)
    private var weightedBpmMs = 0.0
    private var lastValid: TimedBPM?
    private var lastTimeMs: Int64?
    private(set) var resting = RestingHeartRateWindow()
    private(set) var rmssd = RMSSDAccumulator()

    init(gapLimitMs: Int64, zones: HeartRateZones) {
        self.gapLimitMs = gapLimitMs
        self.zones = zones
    }

    /// False, and nothing changed, for a sample older than one already added: the caller
    /// rebuilds the day in time order.
    mutating func add(_ sample: StoredHeartRate) -> Bool {
        if let lastTimeMs, sample.timeMs < lastTimeMs { return false }
        lastTimeMs = sample.timeMs
        samples += 1
        guard sample.valid else {
            rmssd.breakChain()
            return true
        }
        validSamples += 1
        min = Swift.min(min ?? sample.bpm, sample.bpm)
        max = Swift.max(max ?? sample.bpm, sample.bpm)
        if let lastValid {
            let gap = sample.timeMs - lastValid.timeMs
            if gap > 0 && gap <= gapLimitMs {
                weightedBpmMs += Double(lastValid.bpm) * Double(gap)
                coveredMs += gap
                if let zone = zones.zone(for: lastValid.bpm) { zoneMs[zone] += gap }
            }
        }
        lastValid = TimedBPM(timeMs: sample.timeMs, bpm: sample.bpm)
        resting.add(timeMs: sample.timeMs, bpm: sample.bpm, gapLimitMs: gapLimitMs)
        rmssd.add(rr1024: sample.rrIntervals, timeMs: sample.timeMs, gapLimitMs: gapLimitMs)
        return true
    }

    var average: Double? { coveredMs > 0 ? weightedBpmMs / Double(coveredMs) : nil }

    /// The `heart_rate` object of the payload: null where there is no data, never a made-up zero.
    var json: JSONValue {
        .object([
            ("samples", .number(samples)),
            ("valid_samples", .number(validSamples)),
            ("min", .number(min)),
            ("max", .number(max)),
            ("avg", .number(average, digits: 1)),
            ("resting", .number(resting.lowestMean, digits: 1)),
            ("resting_method", .string(RestingHeartRateWindow.method)),
            ("coverage_s", .int((coveredMs + 500) / 1000)),
            ("zones_s", coveredMs > 0 ? .array(zoneMs.map { .int(($0 + 500) / 1000) }) : .null),
            ("zone_scheme", zones.scheme),
            ("rmssd_ms", .number(rmssd.rmssdMs, digits: 1)),
        ])
    }
}
