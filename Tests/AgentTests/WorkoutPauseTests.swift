import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// Pauses and bad input, through the workout service in-process (WorkoutServiceTests' rig: a real
/// store file, the service ticked on the samples' time). The tracks are synthesised (said so):
/// straight walks with a receiver's jitter from a seeded generator, because what is checked here is
/// the rule on known time lines (a light, a slow walker, a tunnel, a long stop); the accuracy on real
/// tracks is measured by scripts/workout-accuracy.py (docs/health.md, "Accuracy").
@Suite("Workout pauses and bad input")
struct WorkoutPauseTests {
    /// A part of a track: `seconds` at `speedMps` (0: standing), or a gap without fixes.
    enum Part {
        case move(seconds: Int, speedMps: Double)
        case gap(seconds: Int)
    }

    /// One fix a second along a straight line north, each with up to `jitterM` of position noise
    /// (east and north, uniform) and the speed a receiver reports (standing: under 0.2 m/s).
    static func track(_ parts: [Part], start: Date = WorkoutServiceTests.t0, jitterM: Double = 2.5, seed: UInt64 = 30) -> WorkoutServiceTests.Session {
        var random = SplitMix(seed: seed)
        var fixes: [StoredFix] = []
        var north = 0.0
        var second = 0
        for part in parts {
            switch part {
            case .gap(let seconds):
                second += seconds
            case .move(let seconds, let speed):
                for _ in 0..<seconds {
                    north += speed
                    let ms = Int64((start.timeIntervalSince1970 + Double(second)) * 1000)
                    let lat = 52.5 + (north + (random.nextUnit() * 2 - 1) * jitterM) / 111_320
                    let lon = 13.4 + (random.nextUnit() * 2 - 1) * jitterM / (111_320 * cos(52.5 * .pi / 180))
                    let reported = speed > 0 ? speed * (0.9 + 0.2 * random.nextUnit()) : 0.2 * random.nextUnit()
                    fixes.append(StoredFix(
                        timeMs: ms, receivedMs: ms, lat: lat, lon: lon, speed: reported, track: speed > 0 ? 0 : nil, eph: 8, mode: 3,
                        satellites: 9, timeSource: "gps"))
                    second += 1
                }
            }
        }
        var session = WorkoutServiceTests.Session(start: start, beforeS: 0, runS: 0, afterS: 0)
        session.fixes = fixes
        session.heartRates = fixes.map { WorkoutServiceTests.Session.heartRate(Date(unixMs: $0.timeMs), bpm: 70) }
        return session
    }

    static func workouts(_ parts: [Part]) async throws -> [StoredWorkout] {
        let rig = try WorkoutServiceTests.Rig()
        let service = rig.service()
        try await service.start(nowMs: WorkoutServiceTests.t0.unixMs)
        try await rig.feed(track(parts), to: service)
        return try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }
    }

    static func field(_ workout: StoredWorkout, _ key: String) -> Double? {
        ((try? JSONSerialization.jsonObject(with: Data(workout.record.utf8))) as? [String: Any])?[key] as? Double
    }

    static func within(_ value: Double, _ expected: Double, _ fraction: Double) -> Bool { abs(value - expected) <= expected * fraction }

    @Test("standing 60 s at a light in a 16-minute walk: one workout, the minute paused (moving time and distance), the walked length within 3 %")
    func light() async throws {
        let walked = 2 * 480 * 1.4
        let found = try await Self.workouts([
            .move(seconds: 120, speedMps: 0), .move(seconds: 480, speedMps: 1.4), .move(seconds: 60, speedMps: 0),
            .move(seconds: 480, speedMps: 1.4), .move(seconds: 420, speedMps: 0),
        ])
        try #require(found.count == 1, "\(found.map(\.record))")
        let workout = try #require(found.first)
        let moving = try #require(Self.field(workout, "moving_s"))
        #expect(Self.within(workout.distanceM, walked, 0.03), "distance \(workout.distanceM) m, walked \(walked) m \(workout.record)")
        #expect(abs(moving - 960) <= 20, "moving \(moving) s of 960 s walked; the minute at the light is a pause")
    }

    @Test("a slow walker (0.8 m/s for 15 minutes): one workout, never paused, the walked length within 3 %")
    func slowWalker() async throws {
        let found = try await Self.workouts([.move(seconds: 120, speedMps: 0), .move(seconds: 900, speedMps: 0.8), .move(seconds: 420, speedMps: 0)])
        try #require(found.count == 1, "\(found.map(\.record))")
        let workout = try #require(found.first)
        let moving = try #require(Self.field(workout, "moving_s"))
        #expect(Self.within(workout.distanceM, 720, 0.03), "distance \(workout.distanceM) m, walked 720 m")
        #expect(moving >= 880, "moving \(moving) s of 900 s walked")
    }

    @Test("a 10.1-minute walk at 1.57 m/s is found: it starts at the first step, not a window later")
    func justTenMinutes() async throws {
        let found = try await Self.workouts([.move(seconds: 120, speedMps: 0), .move(seconds: 606, speedMps: 1.57), .move(seconds: 420, speedMps: 0)])
        try #require(found.count == 1, "\(found.map(\.record))")
        let workout = try #require(found.first)
        let startOffset = Double(workout.startMs - WorkoutServiceTests.t0.timeIntervalSince1970.milliseconds) / 1000 - 120
        #expect(abs(startOffset) <= 10, "started \(startOffset) s from the first step")
        #expect(Self.within(workout.distanceM, 606 * 1.57, 0.03), "distance \(workout.distanceM) m of \(606 * 1.57) m")
    }

    @Test("a 10-minute tunnel (no fixes) in a 40-minute run: two workouts, one either side, the tunnel counted in neither (stated in docs/health.md)")
    func tunnel() async throws {
        let found = try await Self.workouts([
            .move(seconds: 120, speedMps: 0), .move(seconds: 900, speedMps: 3), .gap(seconds: 600), .move(seconds: 900, speedMps: 3),
            .move(seconds: 420, speedMps: 0),
        ])
        try #require(found.count == 2, "\(found.map(\.record))")
        for workout in found { #expect(Self.within(workout.distanceM, 2700, 0.03), "distance \(workout.distanceM) m of 2700 m") }
    }

    @Test("a 2-hour stop between two walks: two workouts, the stop in neither")
    func longStop() async throws {
        let found = try await Self.workouts([
            .move(seconds: 120, speedMps: 0), .move(seconds: 720, speedMps: 1.4), .move(seconds: 7200, speedMps: 0),
            .move(seconds: 720, speedMps: 1.4), .move(seconds: 420, speedMps: 0),
        ])
        try #require(found.count == 2, "\(found.map(\.record))")
        for workout in found {
            #expect(Self.within(workout.distanceM, 1008, 0.03), "distance \(workout.distanceM) m of 1008 m")
            #expect(Double((workout.endMs ?? 0) - workout.startMs) / 1000 < 760, "\(workout.record)")
        }
    }
}

extension TimeInterval {
    fileprivate var milliseconds: Int64 { Int64((self * 1000).rounded()) }
}
