/// Capped exponential backoff with full jitter: the n-th delay is uniform in
/// [min, min(max, min·2ⁿ)], so a fleet of Pis that lost the same broker does not return in step.
public struct Backoff: Sendable {
    public let minimum: Double
    public let maximum: Double
    public private(set) var failures = 0

    public init(minimum: Double, maximum: Double) {
        self.minimum = max(0.001, minimum)
        self.maximum = max(self.minimum, maximum)
    }

    /// The delay before the next attempt, in seconds; counts one more failure.
    public mutating func nextDelay() -> Double {
        let ceiling = min(maximum, minimum * Double(1 << min(failures, 30)))
        failures += 1
        return Double.random(in: minimum...ceiling)
    }

    public mutating func reset() { failures = 0 }
}
