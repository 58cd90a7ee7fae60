import Foundation

/// Every environment variable the tests, the fault suite and the demo steer the agent with, read
/// in one place (docs/testing.md lists them). Nothing in production sets them; each one absent
/// means the agent's own behaviour.
package struct TestHooks: Sendable {
    /// `KEEPALIVE_CLOCK_SYNCHRONISED=1|0`: overrides the kernel's "clock synchronised" answer
    /// (containers never mark it; the demo replays a 2014 capture).
    var clockSynchronised: Bool?
    /// `KEEPALIVE_FAULT_CLOCK_OFFSET_S=N`: the system clock reads N seconds off, as a Pi without
    /// an RTC does after booting with a stale saved time.
    var clockOffsetS: Double
    /// `KEEPALIVE_FAULT_CLOCK_STEP_S=N` with `KEEPALIVE_FAULT_CLOCK_STEP_AFTER_S=T`: T seconds after
    /// start the system clock steps by N seconds, as when chrony or NTP first sets a Pi's clock.
    var clockStep: (afterS: Double, byS: Double)?
    /// `KEEPALIVE_FAULT_WEDGE_WRITER_AFTER_S=N`: the sample writer's loop stops after N seconds,
    /// as a writer stuck in a system call would (the watchdog test).
    var wedgeWriterAfterS: Double?
    /// `KEEPALIVE_STORE_FULL_CHECK_MAX_BYTES`: the largest store checked whole at start.
    var storeFullCheckMaxBytes: Int64?
    /// `KEEPALIVE_STORE_CHECK_AFTER_S`: when the background check of a large store starts.
    var storeCheckAfterS: Double?
    /// `KEEPALIVE_HA_REANNOUNCE_MIN_S`: the least time between two Home Assistant announcements.
    var homeAssistantReannounceMinS: Double?
    /// `KEEPALIVE_FAULT_ARCHIVE_KILL_AFTER_COMMITS=N`: `keepalive archive` SIGKILLs itself right
    /// after its Nth stored row is committed, before that message's PUBACK is written (issue 48's
    /// crash between a commit and its acknowledgement, `FleetCommitKillTests`).
    package var archiveKillAfterCommits: Int?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func number(_ name: String) -> Double? { environment[name].flatMap(Double.init) }
        clockSynchronised = switch environment["KEEPALIVE_CLOCK_SYNCHRONISED"] {
        case "1": true
        case "0": false
        default: nil
        }
        clockOffsetS = number("KEEPALIVE_FAULT_CLOCK_OFFSET_S") ?? 0
        clockStep = number("KEEPALIVE_FAULT_CLOCK_STEP_S").map { (number("KEEPALIVE_FAULT_CLOCK_STEP_AFTER_S") ?? 0, $0) }
        wedgeWriterAfterS = number("KEEPALIVE_FAULT_WEDGE_WRITER_AFTER_S")
        storeFullCheckMaxBytes = number("KEEPALIVE_STORE_FULL_CHECK_MAX_BYTES").map { Int64($0) }
        storeCheckAfterS = number("KEEPALIVE_STORE_CHECK_AFTER_S")
        homeAssistantReannounceMinS = number("KEEPALIVE_HA_REANNOUNCE_MIN_S")
        archiveKillAfterCommits = number("KEEPALIVE_FAULT_ARCHIVE_KILL_AFTER_COMMITS").map { Int($0) }
    }

    package static let current = TestHooks()
}
