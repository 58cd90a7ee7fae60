import Dispatch

/// Seconds from `earlier`, a `DispatchTime` uptime in nanoseconds, until now. 0 when another
/// thread recorded `earlier` after this one read the clock: the unsigned subtraction would trap.
public func secondsSince(uptimeNanoseconds earlier: UInt64) -> Double {
    let now = DispatchTime.now().uptimeNanoseconds
    return now > earlier ? Double(now - earlier) / 1e9 : 0
}
