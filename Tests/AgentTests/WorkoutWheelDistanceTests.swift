import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// When a workout takes its distance from a bike's wheel (`WorkoutSummary.compute(…
/// sensorDistanceM:)`, docs/health.md "Rides"): with no fixes, or a GPS distance short of 0.9 ×
/// the wheel's (a tunnel, a trainer indoors); never when the GPS measured as far or further.
/// The fixes are synthesised: 5 minutes due north at 7 m/s.
@Suite("A workout's distance from the wheel")
struct WorkoutWheelDistanceTests {
    static let start: Int64 = 1_764_000_000_000

    static let fixes = (0..<300).map { second in
        StoredFix(
            timeMs: start + Int64(second) * 1000, receivedMs: start + Int64(second) * 1000, lat: 52.5 + Double(second) * 7 / 111_320,
            lon: 13.4, altMSL: 35, speed: 7, track: 0, eph: 5, epv: 8, mode: 3, satellites: 9, timeSource: "gps")
    }

    static func summary(fixes: [StoredFix], sensorDistanceM: Double?) -> WorkoutSummary {
        WorkoutSummary.compute(
            startMs: start, endMs: start + 299_000, fixes: fixes, heartRates: [], steps: [], settings: WorkoutSettings(),
            zones: HeartRateZones(maxHR: 190, restingHR: 60), stepSettings: StepSettings(), sensorDistanceM: sensorDistanceM)
    }

    @Test("the GPS's distance without a wheel, and where it measured at least 0.9 × the wheel's or more than it")
    func gpsKept() {
        let gps = Self.summary(fixes: Self.fixes, sensorDistanceM: nil)
        #expect(gps.distanceSource == "gps" && abs(gps.distanceM - 2093) < 21, "299 s at 7 m/s: \(gps.distanceM)")
        for wheel in [gps.distanceM / 0.91, gps.distanceM, gps.distanceM * 0.8] {
            let summary = Self.summary(fixes: Self.fixes, sensorDistanceM: wheel)
            #expect(summary.distanceSource == "gps" && summary.distanceM == gps.distanceM, "wheel \(wheel) m: \(summary.distanceSource)")
        }
    }

    @Test("the wheel's distance where the GPS fell short of 0.9 × it, and where there are no fixes")
    func wheelUsed() {
        let gps = Self.summary(fixes: Self.fixes, sensorDistanceM: nil).distanceM
        let short = Self.summary(fixes: Self.fixes, sensorDistanceM: gps / 0.89)
        #expect(short.distanceSource == "sensor" && short.distanceM == gps / 0.89)
        // Half the fixes lost in a tunnel: the GPS measures the first half only.
        let tunnel = Self.summary(fixes: Array(Self.fixes.prefix(150)), sensorDistanceM: 2093)
        #expect(tunnel.distanceSource == "sensor" && tunnel.distanceM == 2093)
        let indoors = Self.summary(fixes: [], sensorDistanceM: 1234.5)
        #expect(indoors.distanceSource == "sensor" && indoors.distanceM == 1234.5 && indoors.movingS == 299)
        #expect(tunnel.splits.isEmpty && indoors.splits.isEmpty, "no track, no km splits: \(tunnel.splits.count)")
        #expect(Self.summary(fixes: [], sensorDistanceM: 0).distanceSource == "gps", "a wheel that did not turn measures nothing")
    }
}
