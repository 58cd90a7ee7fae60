import Foundation
import SensorBridge
import StepCounting
import TestKit
import Testing

@Suite("Steps from RSC cadence")
struct CadenceStepAccumulatorTests {
    static let t0: Int64 = 1_795_248_000_000  // 2026-11-21T00:00:00Z, on every grid

    static func rsc(_ cadence: Int, speed: Double = 3.0, total: UInt32? = nil) -> RSCMeasurement {
        RSCMeasurement(speed256: Int(speed * 256), cadence: cadence, totalDistanceDm: total, isRunning: true)
    }

    @Test("the committed fixture: 10 minutes at 170 steps/min from bridge messages give 1700 steps and 1800 m")
    func fixture() throws {
        let text = try String(contentsOfFile: Tools.fixture("steps/rsc-170spm-10min.ndjson"), encoding: .utf8)
        var accumulator = CadenceStepAccumulator(dropoutMs: 10_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in text.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["char"] as? String == "2a53")
            let ts = try #require(object["ts"] as? String), raw = try #require(object["raw"] as? String)
            let time = try #require(formatter.date(from: ts))
            let value = try RSCMeasurement.parse(hex: raw).get()
            let added = accumulator.add(timeMs: Int64((time.timeIntervalSince1970 * 1000).rounded()), measurement: value)
            #expect(added)
        }
        let total = try #require(accumulator.total)
        #expect(abs(total.steps - 1700) < 1e-6)
        #expect(total.movingMs == 600_000 && total.coveredMs == 600_000)
        let average = try #require(total.averageCadence)
        #expect(abs(average - 170) < 1e-9 && total.maxCadence == 170)
        #expect(abs(total.distanceM - 1800) < 1e-6, "from the total-distance deltas")
    }

    @Test("strides count two steps each")
    func strides() throws {
        var accumulator = CadenceStepAccumulator(unit: .strides, dropoutMs: 5000)
        for second in 0...60 { _ = accumulator.add(timeMs: Self.t0 + Int64(second) * 1000, measurement: Self.rsc(85)) }
        let total = try #require(accumulator.total)
        #expect(abs(total.steps - 170) < 1e-9)
        let average = try #require(total.averageCadence)
        #expect(total.maxCadence == 170 && abs(average - 170) < 1e-9)
    }

    /// 5 s at 120, a 60 s gap, 2 s at 180, 2 s standing; each sample's cadence counts until the next.
    static func withDropout() -> CadenceStepAccumulator {
        var accumulator = CadenceStepAccumulator(dropoutMs: 5000)
        _ = accumulator.add(timeMs: t0, measurement: rsc(120))
        _ = accumulator.add(timeMs: t0 + 5000, measurement: rsc(120))  // 5 s at 120: 10 steps
        _ = accumulator.add(timeMs: t0 + 65_000, measurement: rsc(180))  // 60 s gap: nothing
        _ = accumulator.add(timeMs: t0 + 67_000, measurement: rsc(0))  // 2 s at 180: 6 steps
        _ = accumulator.add(timeMs: t0 + 69_000, measurement: rsc(0, speed: 0))  // 2 s standing
        return accumulator
    }

    @Test("a gap longer than the dropout counts nothing")
    func dropout() throws {
        let total = try #require(Self.withDropout().total)
        #expect(abs(total.steps - 16) < 1e-9)
        #expect(total.coveredMs == 9000 && total.movingMs == 7000)
        #expect(total.speedWithoutCadenceMs == 2000, "speed without cadence: a belt sensor, not a standing wearer")
        #expect(total.maxCadence == 180)
    }

    @Test("the newest sample counts nothing yet")
    func newestCountsNothing() throws {
        var accumulator = Self.withDropout()
        let before = try #require(accumulator.total)
        _ = accumulator.add(timeMs: Self.t0 + 70_000, measurement: Self.rsc(200))
        let after = try #require(accumulator.total)
        #expect(abs(after.steps - before.steps) < 1e-9, "the 200 steps/min sample is counted only once a later one closes its interval")
    }

    @Test("an older sample is refused and changes nothing")
    func outOfOrder() throws {
        var accumulator = CadenceStepAccumulator(dropoutMs: 5000)
        _ = accumulator.add(timeMs: Self.t0 + 2000, measurement: Self.rsc(120))
        _ = accumulator.add(timeMs: Self.t0 + 3000, measurement: Self.rsc(120))
        let before = accumulator.buckets
        let older = accumulator.add(timeMs: Self.t0 + 2500, measurement: Self.rsc(200))
        #expect(!older)
        #expect(accumulator.buckets == before && accumulator.samples == 2)
        let same = accumulator.add(timeMs: Self.t0 + 3000, measurement: Self.rsc(120))
        #expect(same, "the same time again is in order")
    }

    @Test("an interval across a bucket boundary is split by time: steps, distance, covered time and cadence on each side")
    func bucketSplit() throws {
        var accumulator = CadenceStepAccumulator(dropoutMs: 10_000)
        let boundary = Self.t0 + 900_000
        _ = accumulator.add(timeMs: boundary - 3000, measurement: Self.rsc(120, total: 100))
        _ = accumulator.add(timeMs: boundary + 1000, measurement: Self.rsc(120, total: 140))
        let buckets = accumulator.buckets
        #expect(buckets.map(\.startMs) == [Self.t0, boundary])
        #expect(abs(buckets[0].steps - 6) < 1e-9 && abs(buckets[1].steps - 2) < 1e-9)
        #expect(abs(buckets[0].distanceM - 3) < 1e-9 && abs(buckets[1].distanceM - 1) < 1e-9)
        #expect(buckets[0].coveredMs == 3000 && buckets[1].coveredMs == 1000)
        #expect(buckets[0].maxCadence == 120 && buckets[1].maxCadence == 120)
    }

    static func fourSecondsAtSpeed() -> CadenceStepAccumulator {
        var accumulator = CadenceStepAccumulator(dropoutMs: 10_000)
        _ = accumulator.add(timeMs: t0, measurement: rsc(160, speed: 2.5))
        _ = accumulator.add(timeMs: t0 + 4000, measurement: rsc(160, speed: 2.5, total: UInt32.max - 9))
        return accumulator
    }

    @Test("distance: speed × time without totals")
    func distanceFromSpeed() throws {
        #expect(abs(try #require(Self.fourSecondsAtSpeed().total).distanceM - 10) < 1e-9, "2.5 m/s × 4 s")
    }

    @Test("distance: wrap, reset and implausible jumps in the total")
    func distanceFromTotals() throws {
        var accumulator = Self.fourSecondsAtSpeed()
        #expect(abs(try #require(accumulator.total).distanceM - 10) < 1e-9, "2.5 m/s × 4 s")
        _ = accumulator.add(timeMs: Self.t0 + 6000, measurement: Self.rsc(160, total: 40))  // wrapped: 10 + 40 dm
        #expect(abs(try #require(accumulator.total).distanceM - 15) < 1e-9)
        _ = accumulator.add(timeMs: Self.t0 + 8000, measurement: Self.rsc(160, total: 30))  // reset: 3 m since
        #expect(abs(try #require(accumulator.total).distanceM - 18) < 1e-9)
        #expect(accumulator.distanceResets == 1)
        _ = accumulator.add(timeMs: Self.t0 + 9000, measurement: Self.rsc(160, total: 900_000))  // 90 km in 1 s
        #expect(accumulator.implausibleDistances == 1)
        #expect(abs(try #require(accumulator.total).distanceM - 21) < 1e-9, "falls back to 3.0 m/s × 1 s")
    }

    @Test("total-distance deltas", arguments: [
        (UInt32(100), UInt32(130), Int64(1000), TotalDistanceDelta.forward(metres: 3)),
        (UInt32.max, 4, 1000, .wrapped(metres: 0.5)),
        (5000, 20, 1000, .reset(metres: 2)),
        (5000, 2000, 1000, .implausible),
        (100, 100 + 127, 1000, .implausible),
        (100, 100 + 125, 1000, .forward(metres: 12.5)),
    ])
    func totalDistanceDelta(old: UInt32, new: UInt32, gapMs: Int64, expected: TotalDistanceDelta) {
        #expect(TotalDistanceDelta(from: old, to: new, overMs: gapMs) == expected)
    }

    @Test("rounded buckets add up to the rounded total")
    func rounding() {
        var buckets = (0..<4).map { StepBucket(startMs: Int64($0) * 900_000) }
        for index in buckets.indices { buckets[index].steps = 10.4 }
        #expect(StepBucket.roundedSteps(buckets) == [11, 11, 10, 10], "41.6 rounds to 42")
        #expect(StepBucket.roundedSteps([]) == [])
    }
}
