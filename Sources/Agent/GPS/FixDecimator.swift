/// Thins fixes to at most one per `1 / maxRateHz` seconds, keeping the most accurate (smallest
/// eph) of each interval. A fix is released when a fix of a later interval arrives.
///
/// Intervals are compared only between fixes stamped by the same clock: gpsd reports the first
/// fixes of a session before it has seen a date (no GPS time: the system clock stamps them),
/// and GPS time may trail the system clock by hours while the clock rule still trusts it. A
/// GPS-timed fix is not "older" than a system-timed one: the held fix is released and the new
/// clock takes over.
struct FixDecimator {
    let intervalMs: Int64
    private var held: (bucket: Int64, fix: ValidStampedFix)?
    /// Fixes not kept: the less accurate of an interval, and fixes older than the one held.
    private(set) var thinned = 0

    init(maxRateHz: Double) {
        intervalMs = max(1, Int64((1000 / maxRateHz).rounded()))
    }

    /// Offers a fix; returns the fix of a finished interval, if one finished.
    mutating func offer(_ fix: ValidStampedFix) -> ValidStampedFix? {
        let bucket = fix.timeMs >= 0 ? fix.timeMs / intervalMs : (fix.timeMs - intervalMs + 1) / intervalMs
        guard let current = held else {
            held = (bucket, fix)
            return nil
        }
        if fix.source != current.fix.source {
            held = (bucket, fix)
            return current.fix
        }
        if bucket == current.bucket {
            if Self.isBetter(fix, than: current.fix) { held = (bucket, fix) }
            thinned += 1
            return nil
        }
        // A fix older than the one held (a receiver replaying its buffer) is not kept.
        guard bucket > current.bucket else {
            thinned += 1
            return nil
        }
        held = (bucket, fix)
        return current.fix
    }

    /// Releases the held fix once it has waited a whole interval (fixes stopped coming).
    mutating func release(receivedBefore cutoffMs: Int64) -> ValidStampedFix? {
        guard let held, held.fix.receivedMs < cutoffMs else { return nil }
        return flush()
    }

    /// Releases the held fix (at shutdown, or when fixes stop).
    mutating func flush() -> ValidStampedFix? {
        defer { held = nil }
        return held?.fix
    }

    private static func isBetter(_ candidate: ValidStampedFix, than current: ValidStampedFix) -> Bool {
        switch (candidate.fix.eph, current.fix.eph) {
        case (let a?, let b?): a < b
        case (.some, nil): true
        default: false
        }
    }
}

/// A valid fix with the time the clock rule chose for it.
struct ValidStampedFix: Sendable, Equatable {
    var fix: ValidFix
    var timeMs: Int64
    var receivedMs: Int64
    var source: ClockRule.Source
}
