import CTimex
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
/// `TestHooks` can override the kernel's answer and set the clock off (tests, the demo, faults).
struct KernelClock: SystemClock {
    private let override: Bool?
    private let offset: TimeInterval

    init(hooks: TestHooks = .current) {
        override = hooks.clockSynchronised
        offset = hooks.clockOffsetS
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
