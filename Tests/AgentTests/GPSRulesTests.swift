import Foundation
import Testing

@testable import Agent

@Suite("GPS rules")
struct GPSRulesTests {
    func raw(mode: Int = 3, lat: Double = 52.5, lon: Double = 13.4, eph: Double = 5, time: Date? = Date(timeIntervalSince1970: 1_800_000_000)) -> RawFix {
        RawFix(time: time, mode: mode, lat: lat, lon: lon, altHAE: 80, altMSL: 40, speed: 1, track: 90, climb: 0, eph: eph, epv: 8,
               satellites: 9)
    }

    @Test("validation keeps a fix of mode ≥ 2 with a finite position in range (extras: the next tests)", arguments: [
        (1, 52.5, 13.4, false), (0, 52.5, 13.4, false), (2, 52.5, 13.4, true), (3, -90, 180, true),
        (3, .nan, 13.4, false), (3, 52.5, .infinity, false), (3, 90.0001, 0, false), (3, 0, -180.5, false),
    ])
    func validation(mode: Int, lat: Double, lon: Double, valid: Bool) {
        let result = FixValidation.validate(raw(mode: mode, lat: lat, lon: lon))
        if case .success = result { #expect(valid) } else { #expect(!valid) }
    }

    /// A 2D fix whose speed and eph are NaN.
    func twoDimensionalWithNaNExtras() -> ValidFix? {
        var input = raw(mode: 2)
        input.speed = .nan
        input.eph = .nan
        guard case .success(let fix) = FixValidation.validate(input) else { return nil }
        return fix
    }

    @Test("a 2D fix has no altitude")
    func noAltitudeIn2D() throws {
        let fix = try #require(twoDimensionalWithNaNExtras(), "rejected")
        #expect(fix.altHAE == nil && fix.altMSL == nil)
    }

    @Test("NaN extras are nil, not zero")
    func extras() throws {
        let fix = try #require(twoDimensionalWithNaNExtras(), "rejected")
        #expect(fix.speed == nil && fix.eph == nil)
        #expect(fix.track == 90)
    }

    @Test("clock rule: GPS time while unsynchronised, system time when synchronised and GPS is > 1 day off")
    func clockRule() {
        let system = Date(timeIntervalSince1970: 1_800_000_000)
        let rollover = system.addingTimeInterval(-1024 * 7 * 86_400)  // a week-rollover receiver
        let close = system.addingTimeInterval(0.4)
        #expect(ClockRule.stamp(gpsTime: rollover, systemTime: system, systemSynchronised: false)?.source == .gps)
        #expect(ClockRule.stamp(gpsTime: rollover, systemTime: system, systemSynchronised: false)?.time == rollover)
        let corrected = ClockRule.stamp(gpsTime: rollover, systemTime: system, systemSynchronised: true)
        #expect(corrected?.source == .system && corrected?.time == system)
        #expect(abs((corrected?.skew ?? 0) + 1024 * 7 * 86_400) < 0.001)
        let normal = ClockRule.stamp(gpsTime: close, systemTime: system, systemSynchronised: true)
        #expect(normal?.source == .gps && normal?.time == close)
        #expect(ClockRule.stamp(gpsTime: nil, systemTime: system, systemSynchronised: true)?.source == .system)
        #expect(ClockRule.stamp(gpsTime: nil, systemTime: system, systemSynchronised: false) == nil, "no trustworthy time at all")
        // A Pi at boot: clock at 1970, not synchronised: GPS time wins.
        let boot = Date(timeIntervalSince1970: 0)
        #expect(ClockRule.stamp(gpsTime: system, systemTime: boot, systemSynchronised: false)?.time == system)
    }

    func stamped(_ ms: Int64, eph: Double?, source: ClockRule.Source = .gps) -> ValidStampedFix {
        ValidStampedFix(
            fix: ValidFix(gpsTime: nil, mode: 3, lat: 1, lon: 2, eph: eph), timeMs: ms, receivedMs: ms, source: source)
    }

    @Test("decimation keeps the most accurate fix of each interval")
    func decimation() {
        var decimator = FixDecimator(maxRateHz: 1)
        #expect(decimator.offer(stamped(1_000, eph: 10)) == nil)
        #expect(decimator.offer(stamped(1_200, eph: 4)) == nil)
        #expect(decimator.offer(stamped(1_400, eph: 7)) == nil)
        #expect(decimator.offer(stamped(1_100, eph: nil)) == nil)
        #expect(decimator.offer(stamped(2_000, eph: 9))?.timeMs == 1_200)
        #expect(decimator.offer(stamped(500, eph: 1)) == nil, "an older fix is not kept")
        #expect(decimator.release(receivedBefore: 2_000) == nil)
        #expect(decimator.release(receivedBefore: 2_001)?.timeMs == 2_000)
        #expect(decimator.flush() == nil)
        let fast = FixDecimator(maxRateHz: 5)
        #expect(fast.intervalMs == 200)
    }

    @Test("a session's first fix without GPS time (system clock) does not hold back GPS-timed fixes that trail it")
    func decimationAcrossClocks() {
        var decimator = FixDecimator(maxRateHz: 1)
        let now: Int64 = 1_800_000_000_000
        let trailing = now - 20 * 3_600_000  // GPS time 20 h behind, within the day the clock rule trusts
        #expect(decimator.offer(stamped(now, eph: 5, source: .system)) == nil)
        #expect(decimator.offer(stamped(trailing, eph: 5))?.source == .system, "the system-timed fix is released, not kept back")
        #expect(decimator.offer(stamped(trailing + 1000, eph: 5))?.timeMs == trailing)
        #expect(decimator.offer(stamped(trailing + 2000, eph: 5))?.timeMs == trailing + 1000)
    }
}
