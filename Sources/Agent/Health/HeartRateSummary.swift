import Store

/// The heart-rate part of a day's health aggregate: counts, min, max and the time-weighted
/// average of the valid samples.
///
/// Time weighting: each valid sample stands for the time until the next valid sample, so a
/// strap notifying faster in one hour does not outweigh a slower one. A gap longer than
/// `gapLimitMs` (`hr.stall_timeout_s`) is a dropout and carries no weight; the last sample of
/// the day carries none either. `coverageS` is the weighted time. Invalid samples (0 bpm, no
/// contact, implausible) are counted in `samples` only.
public struct HeartRateSummary: Sendable, Equatable {
    public var samples: Int
    public var validSamples: Int
    public var min: Int?
    public var max: Int?
    public var average: Double?
    public var coverageS: Double

    public static func compute(_ stored: [StoredHeartRate], gapLimitMs: Int64) -> HeartRateSummary {
        let valid = stored.filter(\.valid).sorted { $0.timeMs < $1.timeMs }
        var weighted = 0.0
        var coveredMs: Int64 = 0
        for (sample, next) in zip(valid, valid.dropFirst()) {
            let gap = next.timeMs - sample.timeMs
            guard gap > 0, gap <= gapLimitMs else { continue }
            weighted += Double(sample.bpm) * Double(gap)
            coveredMs += gap
        }
        return HeartRateSummary(
            samples: stored.count, validSamples: valid.count, min: valid.map(\.bpm).min(), max: valid.map(\.bpm).max(),
            average: coveredMs > 0 ? weighted / Double(coveredMs) : nil, coverageS: Double(coveredMs) / 1000)
    }
}
