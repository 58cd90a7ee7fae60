/// Resting heart rate as the lowest 5-minute rolling mean of valid samples
/// (`resting_method` = `lowest_5min_rolling_mean`).
///
/// For every valid sample, the window holds the valid samples of the 5 minutes ending at it.
/// A window counts once its samples span at least 4.5 minutes with no gap longer than the
/// dropout limit, so a strap put on for a minute, or a window bridging a dropout, is not a
/// "resting" reading. The mean is over samples (a strap notifies about once a second).
struct RestingHeartRateWindow: Sendable {
    static let method = "lowest_5min_rolling_mean"
    static let windowMs: Int64 = 300_000
    static let minimumSpanMs: Int64 = 270_000

    private var window: [TimedBPM] = []
    private var head = 0
    private var sum = 0
    private(set) var lowestMean: Double?

    mutating func add(timeMs: Int64, bpm: Int, gapLimitMs: Int64) {
        if let last = window.last, timeMs - last.timeMs > gapLimitMs {
            window.removeAll(keepingCapacity: true)
            head = 0
            sum = 0
        }
        window.append(TimedBPM(timeMs: timeMs, bpm: bpm))
        sum += bpm
        while window[head].timeMs < timeMs - Self.windowMs {
            sum -= window[head].bpm
            head += 1
        }
        if head > 1024 {
            window.removeFirst(head)
            head = 0
        }
        guard timeMs - window[head].timeMs >= Self.minimumSpanMs else { return }
        let mean = Double(sum) / Double(window.count - head)
        lowestMean = min(lowestMean ?? mean, mean)
    }
}

/// A heart rate at a time (Unix ms).
struct TimedBPM: Sendable, Codable {
    var timeMs: Int64
    var bpm: Int
}

/// Kept with a day's folds (`DayAggregate+Kept.swift`): only the samples still in the window,
/// as two arrays; the running sum is theirs.
extension RestingHeartRateWindow: Codable {
    private enum CodingKeys: String, CodingKey { case timesMs, bpms, lowestMean }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let times = try container.decode([Int64].self, forKey: .timesMs)
        let bpms = try container.decode([Int].self, forKey: .bpms)
        guard times.count == bpms.count else {
            throw DecodingError.dataCorruptedError(forKey: .bpms, in: container, debugDescription: "times and rates differ in number")
        }
        window = zip(times, bpms).map { TimedBPM(timeMs: $0, bpm: $1) }
        sum = bpms.reduce(0, +)
        lowestMean = try container.decodeIfPresent(Double.self, forKey: .lowestMean)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let live = window[head...]
        try container.encode(live.map(\.timeMs), forKey: .timesMs)
        try container.encode(live.map(\.bpm), forKey: .bpms)
        try container.encodeIfPresent(lowestMean, forKey: .lowestMean)
    }
}
