import CTimex
import Foundation
import Supervision

/// What the kernel says: the time of day and whether NTP (or chrony, systemd-timesyncd) has
/// synchronised it. A Pi has no RTC: at boot it is not synchronised.
protocol KernelTime: WallClock {
    func isSynchronised() -> Bool
    /// Time since an arbitrary fixed point on a clock no step of the wall clock moves: how a
    /// step is told from time that really passed.
    func uptime() -> Duration
}

extension KernelTime {
    func uptime() -> Duration { KernelClockOrigin.instant.duration(to: .now) }
}

private enum KernelClockOrigin {
    static let instant = ContinuousClock.now
}

/// The kernel's view: `ntp_adjtime` reports STA_UNSYNC (or TIME_ERROR) until a time daemon
/// has set and disciplined the clock.
///
/// `TestHooks` can override the kernel's answer and set the clock off (tests, the demo, faults).
struct KernelClock: KernelTime {
    private let override: Bool?
    private let offset: TimeInterval
    private let step: (afterS: Double, byS: Double)?
    private let realtime = SystemClock()

    init(hooks: TestHooks = .current) {
        override = hooks.clockSynchronised
        offset = hooks.clockOffsetS
        step = hooks.clockStep
    }

    func now() -> Date {
        let stepped = step.map { uptime() >= .seconds($0.afterS) ? $0.byS : 0 } ?? 0
        return realtime.now().addingTimeInterval(offset + stepped)
    }

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
