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

    private var window: [(timeMs: Int64, bpm: Int)] = []
    private var head = 0
    private var sum = 0
    private(set) var lowestMean: Double?

    mutating func add(timeMs: Int64, bpm: Int, gapLimitMs: Int64) {
        if let last = window.last, timeMs - last.timeMs > gapLimitMs {
            window.removeAll(keepingCapacity: true)
            head = 0
            sum = 0
        }
        window.append((timeMs, bpm))
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
