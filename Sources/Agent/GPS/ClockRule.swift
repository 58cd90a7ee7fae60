import CGPS
import Foundation

/// The system clock as the agent sees it: what time it is and whether NTP (or chrony,
/// systemd-timesyncd) has synchronised it. A Pi has no RTC: at boot it is not synchronised.
protocol SystemClock: Sendable {
    func now() -> Date
    func isSynchronised() -> Bool
}

/// The kernel's view: `ntp_adjtime` reports STA_UNSYNC (or TIME_ERROR) until a time daemon
/// has set and disciplined the clock.
///
/// `KEEPALIVE_CLOCK_SYNCHRONISED=1|0` in the environment overrides the kernel's answer: for
/// tests and for the demo, which replays a 2014 capture on a machine whose clock may never be
/// marked synchronised (containers).
///
/// `KEEPALIVE_FAULT_CLOCK_OFFSET_S=N` (fault injection) makes the system clock read N seconds
/// off, as a Pi without an RTC does after booting with a stale saved time.
struct KernelClock: SystemClock {
    private let override: Bool?
    private let offset: TimeInterval

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        switch environment["KEEPALIVE_CLOCK_SYNCHRONISED"] {
        case "1": override = true
        case "0": override = false
        default: override = nil
        }
        offset = environment["KEEPALIVE_FAULT_CLOCK_OFFSET_S"].flatMap(TimeInterval.init) ?? 0
    }

    func now() -> Date { Date().addingTimeInterval(offset) }

    func isSynchronised() -> Bool {
        if let override { return override }
        var status = timex()
        let state = ntp_adjtime(&status)
        if state == -1 {
            // adjtimex denied (a seccomp filter): systemd-timesyncd's flag file is the next best.
            return FileManager.default.fileExists(atPath: "/run/systemd/timesync/synchronized")
        }
        return state != TIME_ERROR && status.status & STA_UNSYNC == 0
    }
}

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
