import Foundation

/// The time a day or a workout can be cut on: the system clock once synchronised, or before that
/// the system clock corrected by the newest GPS-timed fix; nil with neither (a Pi without an RTC
/// boots in 1970 or at its last shutdown).
struct TrustedTime: Sendable {
    let clock: any SystemClock
    let writer: SampleWriter

    func now() async -> Date? {
        let now = clock.now()
        if clock.isSynchronised() { return now }
        guard let fix = await writer.latestFix, fix.timeSource == "gps" else { return nil }
        return now.addingTimeInterval(Double(fix.timeMs - fix.receivedMs) / 1000)
    }
}
