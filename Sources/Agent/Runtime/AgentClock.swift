import Foundation
import Supervision
import Synchronization

/// The agent's one clock: what time and what local day it is for every part of the agent —
/// "today" of queries and `health/today`, the 18:00 sleep window, the 5-minute location slots,
/// retention, the status and event stamps, the outbox. Handed to each service and to the Store
/// by `AgentRunner` (the CLI makes one of its own the same way).
///
/// Its time is the kernel's while the kernel's clock is synchronised (chrony with gpsd as its
/// reference, NTP, timesyncd). Before that — a Pi in a backpack boots at its last saved time —
/// it is the kernel's time corrected by the newest GPS-timed fix (GPS time minus the kernel's
/// time when the fix was read), so days are cut on the clock that stamped the fixes. With
/// neither it is the kernel's time, and `trustedNow()` is nil: nothing is cut on a day then.
///
/// Two readings are kept apart on purpose: `systemNow()` is the kernel's raw time, for receive
/// stamps and for measuring the GPS correction itself (a corrected clock measured against its
/// own correction would chase it); `now()` is the agent's time for everything else.
final class AgentClock: WallClock {
    private let kernel: any KernelTime
    /// GPS time − kernel time of the newest GPS-timed fix, seconds.
    private let gpsCorrection = Mutex<TimeInterval?>(nil)

    init(kernel: any KernelTime = KernelClock()) {
        self.kernel = kernel
    }

    /// The kernel's time, uncorrected (with the fault hook's offset).
    func systemNow() -> Date { kernel.now() }

    func isSynchronised() -> Bool { kernel.isSynchronised() }

    /// Monotonic time (see `KernelTime.uptime`).
    func uptime() -> Duration { kernel.uptime() }

    /// The agent's time: the kernel's once synchronised, else corrected by GPS time when there is one.
    func now() -> Date { trustedNow() ?? kernel.now() }

    /// The agent's time when some clock can be trusted with it (synchronised, or a GPS-timed fix
    /// seen); nil otherwise.
    func trustedNow() -> Date? {
        let system = kernel.now()
        if kernel.isSynchronised() { return system }
        return gpsCorrection.withLock { $0 }.map { system.addingTimeInterval($0) }
    }

    /// Whether `now()` is the kernel's time corrected by GPS time at the moment.
    var isGPSCorrected: Bool {
        !kernel.isSynchronised() && gpsCorrection.withLock({ $0 }) != nil
    }

    /// A fix stamped with GPS time, read when the kernel said `systemTime`.
    func observe(gpsTime: Date, systemTime: Date) {
        gpsCorrection.withLock { $0 = gpsTime.timeIntervalSince(systemTime) }
    }

    /// A program that is not the agent (the command line) has no fixes of its own: the newest
    /// stored GPS-timed fix of this boot tells it the correction the agent uses.
    func observe(storedFixTimeMs timeMs: Int64, receivedMs: Int64) {
        gpsCorrection.withLock { $0 = Double(timeMs - receivedMs) / 1000 }
    }
}
