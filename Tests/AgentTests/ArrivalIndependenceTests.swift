import Foundation
import Testing
import TestKit

@testable import Agent

/// A property of the whole agent: the same inputs give the same workouts and the same day
/// however they arrive (issue 45). Three days are played through gpsfake, gpsd, a heart-rate
/// bridge process and the agent binary, each in several ways (`ArrivalVariant`: gpsfake at 10×,
/// 50× or 500×; the strap's notifications as one backlog before or after the fixes or streamed
/// live; the clock synchronised or not; the agent restarted midway; the rows reaching the
/// workout service as they come or a minute at a time, the product's `fold_s`), and every way must give
/// what the first gave: one workout with the same start and end to the second, distance within
/// 0.1 %, the same moving time, splits and heart rate, and the same day's heart-rate and workout
/// totals.
///
/// The days: 20 minutes at 3 m/s around a 400 m loop (the issue's case); 12 laps of a standard
/// track at 3.5 m/s with 3 m of random error per fix (`StandardTrack`, seeded); a real walk
/// (SnapperGPS w03, as WorkoutRealTrackTests plays it). Each: standing before, standing 7 minutes
/// after (so the end is in the data), two hours ago on whole seconds. The variants run four at a
/// time, each on its own agent, gpsd and device id on one broker.
@Suite("Workouts do not depend on how their data arrives")
struct ArrivalIndependenceTests {
    typealias Variant = ArrivalVariant
    struct Played: Sendable {
        var input: Variant.Input
        var runs: [(variant: Variant, observed: Result<Variant.Observed, any Error>)]
    }

    static let variants: [String: [Variant]] = [
        "loop": [
            Variant(speed: 50, heartRate: .backlogBefore, synchronised: true),
            Variant(speed: 10, heartRate: .backlogBefore, synchronised: false, foldS: 60),
            Variant(speed: 50, heartRate: .backlogBefore, synchronised: false, foldS: 60),
            Variant(speed: 500, heartRate: .backlogAfter, synchronised: false),
            Variant(speed: 50, heartRate: .live, synchronised: false),
            Variant(speed: 50, heartRate: .backlogBefore, synchronised: true, restartMidway: true),
        ],
        "track": [
            Variant(speed: 50, heartRate: .backlogBefore, synchronised: true),
            Variant(speed: 500, heartRate: .live, synchronised: false),
            Variant(speed: 50, heartRate: .backlogAfter, synchronised: false, restartMidway: true, foldS: 60),
        ],
        "walk": [
            Variant(speed: 50, heartRate: .backlogBefore, synchronised: true),
            Variant(speed: 500, heartRate: .backlogAfter, synchronised: false),
            Variant(speed: 50, heartRate: .live, synchronised: true, restartMidway: true),
        ],
    ]

    static let played = Task { () async throws -> [String: Played] in
        let inputs = try Self.inputs()
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let jobs = inputs.flatMap { input in (Self.variants[input.name] ?? []).enumerated().map { (input, $0.offset, $0.element) } }
        var results: [String: [(Int, Variant, Result<Variant.Observed, any Error>)]] = [:]
        // Four at a time: a new one starts as soon as one ends (the 10× one takes three minutes).
        await withTaskGroup(of: (String, Int, Variant, Result<Variant.Observed, any Error>).self) { group in
            var pending = jobs[...]
            func startNext() {
                guard let (input, index, variant) = pending.popFirst() else { return }
                group.addTask {
                    let observed = await captured { try await variant.run(input, broker: broker, deviceID: "\(input.name)\(index)") }
                    return (input.name, index, variant, observed)
                }
            }
            for _ in 0..<4 { startNext() }
            for await (name, index, variant, observed) in group {
                results[name, default: []].append((index, variant, observed))
                startNext()
            }
        }
        return Dictionary(uniqueKeysWithValues: inputs.map { input in
            let runs = (results[input.name] ?? []).sorted { $0.0 < $1.0 }.map { (variant: $0.1, observed: $0.2) }
            return (input.name, Played(input: input, runs: runs))
        })
    }

    // MARK: - The days

    static func inputs() throws -> [Variant.Input] {
        // Two hours ago on whole seconds, all of it on one UTC day (the query asks for one).
        var start = (Date().timeIntervalSince1970 - 7200).rounded(.down)
        let dayS = 86_400.0
        if (start + 3000).truncatingRemainder(dividingBy: dayS) < 3000 { start -= 3600 }
        let t0 = Date(timeIntervalSince1970: start)
        let loop = NMEALog.standing(start: t0, seconds: 180)
            + NMEALog.loop(start: t0.addingTimeInterval(180), seconds: 1200, speedMps: 3, radiusM: 400 / (2 * .pi))
            + NMEALog.standing(start: t0.addingTimeInterval(1380), seconds: 420)
        let laps = StandardTrack.laps(start: t0.addingTimeInterval(180), laps: 12, errorM: 3, speedErrorMps: 0.15, seed: 1)
        let track = NMEALog.standing(start: t0, seconds: 180, lat: laps[0].lat, lon: laps[0].lon) + laps
            + NMEALog.standing(start: t0.addingTimeInterval(Double(180 + laps.count)), seconds: 420, lat: laps[0].lat, lon: laps[0].lon)
        let walk = try Self.snapperWalk(start: t0)
        return [
            input("loop", loop, runFrom: 180, runTo: 1380, cut: 180 + 720),
            input("track", track, runFrom: 180, runTo: 180 + laps.count, cut: 180 + 720),
            input("walk", walk, runFrom: 120, runTo: walk.count - 420, cut: 120 + 600, walking: true),
        ]
    }

    /// The strap's notifications, one a second: resting, rising through the run to 150 bpm, 100
    /// after it (a walk: 75 throughout, below the heart-rate start).
    static func input(_ name: String, _ points: [NMEALog.Point], runFrom: Int, runTo: Int, cut: Int, walking: Bool = false) -> Variant.Input {
        let bpms = points.indices.map { index in
            walking ? 75 : index < runFrom ? 70 : index < runTo ? min(150, 70 + (index - runFrom) / 2) : 100
        }
        let lines = zip(points, bpms).enumerated().map { index, pair in
            #"{"ts":"\#(BridgeBacklog.timestamp(pair.0.time.unixMs))","seq":\#(index + 1),"sensor":"strap","raw":"\#(String(format: "06%02x", pair.1))"}"#
        }
        return Variant.Input(name: name, points: points, heartRate: lines, maxBPM: bpms.max() ?? 0, cut: cut)
    }

    /// SnapperGPS w03 as WorkoutRealTrackTests plays it: 2 minutes standing, the walk, 7 minutes standing.
    static func snapperWalk(start: Date) throws -> [NMEALog.Point] {
        let snapper = try WorkoutRealTrackTests.read("w03-snapper.csv")
        let first = try #require(snapper.first), last = try #require(snapper.last)
        func point(_ fix: WorkoutRealTrackTests.Fix, at time: Date) -> NMEALog.Point {
            NMEALog.Point(time: time, lat: fix.lat, lon: fix.lon, hdop: min(50, max(0.05, 2.45 * fix.confidenceM / 1.18 / 19)), reportsSpeed: false)
        }
        let walkStart = start.addingTimeInterval(120)
        let before = (0..<120).map { point(first, at: start.addingTimeInterval(Double($0))) }
        let walk = snapper.map { point($0, at: walkStart.addingTimeInterval($0.seconds - first.seconds)) }
        let walkEnd = walkStart.addingTimeInterval((last.seconds - first.seconds).rounded(.up))
        let after = (1...420).map { point(last, at: walkEnd.addingTimeInterval(Double($0))) }
        return before + walk + after
    }

    // MARK: - The claims

    static func runs(_ name: String) async throws -> (Variant.Input, [(Variant, Variant.Observed)]) {
        let played = try #require(try await Self.played.value[name])
        let runs = try played.runs.map { ($0.variant, try $0.observed.get()) }
        for (variant, observed) in runs {
            let summary = observed.workoutList.map { w in
                "\(w["start"] ?? "?")–\(w["end"] ?? "?") \(w["distance_m"] ?? "?") m moving \(w["moving_s"] ?? "?") s splits \((w["splits"] as? [Any])?.count ?? -1) hr \(w["hr"].map { "\($0)" } ?? "-")"
            }
            print("arrival: \(name), \(variant): \(summary)")
        }
        return (played.input, runs)
    }

    /// Every variant's one workout against the first's.
    static func checkSameWorkouts(_ name: String) async throws {
        let (_, runs) = try await runs(name)
        let (firstVariant, first) = try #require(runs.first)
        let reference = try #require(first.workoutList.first, "\(firstVariant): no workout")
        #expect(first.workoutList.count == 1, "\(firstVariant): \(first.workouts)")
        for (variant, observed) in runs.dropFirst() {
            let list = observed.workoutList
            #expect(list.count == 1, "\(variant): \(observed.workouts)")
            guard let workout = list.first else { continue }
            #expect(workout["start"] as? String == reference["start"] as? String && workout["end"] as? String == reference["end"] as? String,
                "\(variant): \(workout["start"] ?? "?")–\(workout["end"] ?? "?"), \(firstVariant): \(reference["start"] ?? "?")–\(reference["end"] ?? "?")")
            let distance = workout["distance_m"] as? Double ?? 0, referenceDistance = reference["distance_m"] as? Double ?? 1
            #expect(abs(distance / referenceDistance - 1) <= 0.001, "\(variant): \(distance) m, \(firstVariant): \(referenceDistance) m")
            let moving = workout["moving_s"] as? Double ?? 0, referenceMoving = reference["moving_s"] as? Double ?? 0
            #expect(abs(moving - referenceMoving) <= 1, "\(variant): moving \(moving) s, \(firstVariant): \(referenceMoving) s")
            let splits = (workout["splits"] as? [[String: Any]] ?? []).map { $0["elapsed_s"] as? Double ?? 0 }
            let referenceSplits = (reference["splits"] as? [[String: Any]] ?? []).map { $0["elapsed_s"] as? Double ?? 0 }
            #expect(splits.count == referenceSplits.count && zip(splits, referenceSplits).allSatisfy { abs($0 - $1) <= 2 },
                "\(variant): splits \(splits), \(firstVariant): \(referenceSplits)")
            let hr = workout["hr"] as? [String: Any], referenceHR = reference["hr"] as? [String: Any]
            #expect(hr?["max"] as? Int == referenceHR?["max"] as? Int && hr?["avg"] as? Double == referenceHR?["avg"] as? Double,
                "\(variant): hr \(hr ?? [:]), \(firstVariant): \(referenceHR ?? [:])")
        }
    }

    /// Every variant's day against the first's: heart rate and the workouts' totals.
    static func checkSameDay(_ name: String) async throws {
        let (input, runs) = try await runs(name)
        let (firstVariant, first) = try #require(runs.first)
        func figures(_ health: [String: Any]) -> (samples: Int?, bpm: String, workouts: Int?, distance: Double) {
            let hr = health["heart_rate"] as? [String: Any] ?? [:]
            let workouts = health["workouts"] as? [String: Any] ?? [:]
            return (hr["valid_samples"] as? Int, "\(hr["avg"] ?? "-") \(hr["min"] ?? "-") \(hr["max"] ?? "-")",
                workouts["count"] as? Int, workouts["distance_m"] as? Double ?? 0)
        }
        let reference = figures(first.healthObject)
        #expect(reference.samples == input.heartRate.count, "\(firstVariant): \(first.health)")
        for (variant, observed) in runs.dropFirst() {
            let day = figures(observed.healthObject)
            #expect(day.samples == reference.samples && day.bpm == reference.bpm, "\(variant): \(observed.health); \(firstVariant): \(first.health)")
            #expect(day.workouts == reference.workouts && abs(day.distance - reference.distance) <= reference.distance * 0.001,
                "\(variant): \(observed.health); \(firstVariant): \(first.health)")
        }
    }

    @Test("20 minutes around a 400 m loop: the same workout at 10×, 50× and 500×, heart rate before, after or live, any clock, a restart")
    func loopWorkouts() async throws { try await Self.checkSameWorkouts("loop") }

    @Test("12 laps of a track with 3 m error: the same workout however it arrives")
    func trackWorkouts() async throws { try await Self.checkSameWorkouts("track") }

    @Test("a real walk (SnapperGPS w03): the same workout however it arrives")
    func walkWorkouts() async throws { try await Self.checkSameWorkouts("walk") }

    @Test("the same day's heart rate and workout totals however the data arrives", arguments: ["loop", "track", "walk"])
    func sameDay(_ name: String) async throws { try await Self.checkSameDay(name) }

    @Test("through gpsd, the loop measures within 1 % of 3 600 m and the track within 1 % of 12 laps (4 800 m)")
    func lapsWithinOnePercent() async throws {
        for (name, length) in [("loop", 3600.0), ("track", 4800.0)] {
            let (_, runs) = try await Self.runs(name)
            for (variant, observed) in runs {
                let distance = observed.workoutList.first?["distance_m"] as? Double ?? 0
                print("arrival: \(name), \(variant): \(distance) m of \(length) m (\(String(format: "%+.2f", (distance / length - 1) * 100)) %)")
                #expect(abs(distance / length - 1) <= 0.01, "\(name), \(variant): \(distance) m of \(length) m")
            }
        }
    }
}
