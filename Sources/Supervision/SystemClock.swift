import Foundation

/// The time of day. Every wall-clock reading in KeepAlive goes through one of these, handed
/// down by the owner (the agent hands its `AgentClock` to the Store and every service), so all
/// parts agree on what day it is — also when the clock is set off by the fault hook or corrected
/// by GPS time. Durations and timeouts never use it: they use `ContinuousClock` or
/// `MonotonicCondition`, which a clock step (chrony or NTP setting a Pi's clock at boot) does
/// not move.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The kernel's realtime clock, as it is: the one place the time of day is read.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

extension WallClock {
    /// `now()` in Unix milliseconds, as the store and the payloads keep it.
    public func nowMs() -> Int64 { now().unixMs }
}
