/// The distance between two readings of an RSC total distance (uint32, 1/10 m), which wraps at
/// 2^32 and restarts from zero when the pod is reset or its battery changed.
///
/// A delta is believed only if a runner could have covered it in the time between the two
/// readings (`maxSpeed`, 12.5 m/s: faster than any sprinter, plus a decimetre of resolution).
/// A value below the previous one is a wrap when the previous was within that reach of 2^32,
/// else a reset: the pod counted from zero, so the new value is the distance since the reset.
/// Anything else is `nil`: the caller falls back to speed × time for that interval.
public enum TotalDistanceDelta: Sendable, Equatable {
    case forward(metres: Double)
    case wrapped(metres: Double)
    case reset(metres: Double)
    case implausible

    public static let maxSpeedMetresPerSecond = 12.5

    public init(from old: UInt32, to new: UInt32, overMs gapMs: Int64) {
        let reachDm = UInt64(Double(max(gapMs, 0)) / 1000 * Self.maxSpeedMetresPerSecond * 10) + 1
        if new >= old {
            let delta = UInt64(new - old)
            self = delta <= reachDm ? .forward(metres: Double(delta) / 10) : .implausible
        } else if UInt64(UInt32.max - old) + UInt64(new) + 1 <= reachDm {
            self = .wrapped(metres: Double(UInt64(UInt32.max - old) + UInt64(new) + 1) / 10)
        } else {
            self = UInt64(new) <= reachDm ? .reset(metres: Double(new) / 10) : .implausible
        }
    }

    /// The metres to count, nil when the delta cannot be believed.
    public var metres: Double? {
        switch self {
        case .forward(let metres), .wrapped(let metres), .reset(let metres): metres
        case .implausible: nil
        }
    }
}
