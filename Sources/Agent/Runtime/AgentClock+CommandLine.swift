import Foundation
import Store

extension AgentClock {
    /// The command line's clock, agreeing with the running agent's: while the kernel's clock is
    /// not synchronised, the newest stored GPS-timed fix of this boot gives the correction the
    /// agent applies (a fix from before this boot was measured against another clock, and is
    /// not used).
    static func commandLine(storePath: String) -> AgentClock {
        let clock = AgentClock()
        guard !clock.isSynchronised(), let reader = try? StoreReader(path: storePath),
            let fix = try? reader.read({ try $0.newestGPSTimedFix() })
        else { return clock }
        let bootMs = clock.systemNow().timeIntervalSince1970 * 1000 - ProcessInfo.processInfo.systemUptime * 1000
        if Double(fix.receivedMs) >= bootMs { clock.observe(storedFixTimeMs: fix.timeMs, receivedMs: fix.receivedMs) }
        return clock
    }
}
