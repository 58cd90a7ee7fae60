import Foundation

/// Which clock stamps a fix (SPEC "Inputs/GPS"): GPS time while the system clock is not
/// synchronised; system time when it is and GPS time is more than a day off (week-rollover
/// receivers, replayed logs); otherwise GPS time, the fix's own.
struct ClockRule {
    static let maximumPlausibleSkew: TimeInterval = 86_400

    enum Source: String, Sendable {
        case gps, system
    }

    struct Stamp: Sendable, Equatable {
        var time: Date
        var source: Source
        /// GPS time minus system time, when the fix had a time.
        var skew: TimeInterval?
    }

    /// The fix's timestamp, or nil when no clock can be trusted with it: a fix without GPS time
    /// while the system clock is unsynchronised (it may say 1970) is not stored.
    static func stamp(gpsTime: Date?, systemTime: Date, systemSynchronised: Bool) -> Stamp? {
        guard let gpsTime else {
            return systemSynchronised ? Stamp(time: systemTime, source: .system, skew: nil) : nil
        }
        let skew = gpsTime.timeIntervalSince(systemTime)
        if systemSynchronised && abs(skew) > maximumPlausibleSkew {
            return Stamp(time: systemTime, source: .system, skew: skew)
        }
        return Stamp(time: gpsTime, source: .gps, skew: skew)
    }
}
