import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// Shoes: two pairs, runs credited to the selected one, idempotent by workout id, moved by
/// assign, the limit announced once (in-process, real store, see WorkoutServiceTests).
@Suite("Gear")
struct GearTests {
    /// What the shoes showed at each step of one scenario: two pairs, the first selected, two
    /// 12-minute runs (2160 m each) an hour apart, then a replay, then the second run moved to the
    /// other pair and back. Run once (in-process, a real store); each test states one claim on it.
    struct Credits: Sendable {
        struct Pair: Sendable {
            let runs: Int
            let totalKm: Double
        }
        let runKm: [Double]
        let runIDs: Set<String>
        let afterRuns: Pair?
        let credited: [(gear: String?, workout: String?)]
        let limits: [(percent: Int?, message: String?)]
        let creditedAfterReplay: Int
        let runsAfterReplay: Int?
        let afterMove: (pegasus: Pair?, trail: Pair?)
        let limitsAfterMovingBack: [(percent: Int?, message: String?)]
        let retained: (runs: Int?, name: String?, totalKm: Double?)
    }

    static let credits = Task { () async throws -> Credits in
        let rig = try WorkoutServiceTests.Rig()
        _ = try await rig.gear.add(id: "pegasus", name: "Pegasus 41", startKm: 0, limitKm: 4)
        _ = try await rig.gear.add(id: "trail", name: "Speedgoat", startKm: 120, limitKm: nil)
        _ = try await rig.gear.select(id: "pegasus")
        let service = rig.service()
        try await service.start(nowMs: WorkoutServiceTests.t0.unixMs)
        // Two 12-minute runs (2160 m each) an hour apart.
        let first = WorkoutServiceTests.Session(start: WorkoutServiceTests.t0, runS: 720)
        let second = WorkoutServiceTests.Session(start: WorkoutServiceTests.t0.addingTimeInterval(3600), runS: 720)
        try await rig.feed(first, to: service)
        try await rig.feed(second, to: service)

        let runs = try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }
        try #require(runs.count == 2, "\(runs)")
        func pair(_ id: String) async throws -> Credits.Pair? {
            try await rig.store.readStored { try $0.gear(id: id) }.map { Credits.Pair(runs: $0.runs, totalKm: $0.totalKm) }
        }
        func limits() async throws -> [(percent: Int?, message: String?)] {
            try await GearTests.events(rig, "limit").map { ($0["percent"] as? Int, $0["message"] as? String) }
        }
        let afterRuns = try await pair("pegasus")
        let credited = try await GearTests.events(rig, "credited").map { ($0["gear"] as? String, $0["workout"] as? String) }
        let limitsAfterRuns = try await limits()

        // A replay, and the credit asked again: nothing new.
        try await rig.feed(second, to: service)
        try await rig.gear.workoutFinished(runs[1])
        let creditedAfterReplay = try await GearTests.events(rig, "credited").count
        let runsAfterReplay = try await rig.store.readStored { try $0.gear(id: "pegasus") }?.runs

        // The second run was in the trail shoes: moved, and back again.
        _ = try await rig.gear.assign(workout: runs[1], to: "trail")
        let afterMove = (pegasus: try await pair("pegasus"), trail: try await pair("trail"))
        _ = try await rig.gear.assign(workout: runs[1], to: "pegasus")
        let limitsAfterMovingBack = try await limits()

        // Retained gear/<id> carries the totals.
        let retained = try await rig.inner.queued("\(WorkoutServiceTests.root)/gear/pegasus").last
        return Credits(
            runKm: runs.map { $0.distanceM / 1000 }, runIDs: Set(runs.map(\.id)), afterRuns: afterRuns, credited: credited,
            limits: limitsAfterRuns, creditedAfterReplay: creditedAfterReplay, runsAfterReplay: runsAfterReplay, afterMove: afterMove,
            limitsAfterMovingBack: limitsAfterMovingBack,
            retained: (retained?["runs"] as? Int, retained?["name"] as? String, retained?["total_km"] as? Double))
    }

    @Test("two pairs, one selected: both runs are credited to the selected pair")
    func credits() async throws {
        let credits = try await Self.credits.value
        let pegasus = try #require(credits.afterRuns)
        #expect(pegasus.runs == 2)
        #expect(abs(pegasus.totalKm - (credits.runKm[0] + credits.runKm[1])) < 1e-9)
        #expect(credits.credited.count == 2 && credits.credited.allSatisfy { $0.gear == "pegasus" })
        #expect(Set(credits.credited.compactMap(\.workout)) == credits.runIDs)
    }

    @Test("a pair's 80 % and 100 % of its limit are announced")
    func limitsAnnounced() async throws {
        let limits = try await Self.credits.value.limits
        #expect(limits.map(\.percent) == [80, 100], "both crossed by the second run: \(limits)")
        #expect(limits.last?.message == "time for new shoes")
    }

    @Test("a replay of a run credits nothing new")
    func replayCreditsNothing() async throws {
        let credits = try await Self.credits.value
        #expect(credits.creditedAfterReplay == 2)
        #expect(credits.runsAfterReplay == 2)
    }

    @Test("assign moves a run from one pair to another")
    func assignMovesARun() async throws {
        let credits = try await Self.credits.value
        let pegasus = try #require(credits.afterMove.pegasus)
        let trail = try #require(credits.afterMove.trail)
        #expect(pegasus.runs == 1 && abs(pegasus.totalKm - credits.runKm[0]) < 1e-9)
        #expect(trail.runs == 1 && abs(trail.totalKm - (120 + credits.runKm[1])) < 1e-9)
    }

    @Test("each limit is announced once, also when a run is moved away and back")
    func limitsAnnouncedOnce() async throws {
        let limits = try await Self.credits.value.limitsAfterMovingBack
        #expect(limits.count == 2, "each limit once: \(limits)")
    }

    @Test("the retained gear/<id> carries the pair's totals")
    func retainedTotals() async throws {
        let credits = try await Self.credits.value
        #expect(credits.retained.runs == 2 && credits.retained.name == "Pegasus 41")
        #expect(abs((credits.retained.totalKm ?? 0) - (credits.runKm[0] + credits.runKm[1])) < 0.001)
    }

    @Test("auto_credit off: a run waits unassigned until assigned")
    func manualCredit() async throws {
        let rig = try WorkoutServiceTests.Rig(autoCredit: false)
        _ = try await rig.gear.add(id: "pegasus", name: "Pegasus", startKm: 10, limitKm: 800)
        _ = try await rig.gear.select(id: "pegasus")
        let service = rig.service()
        try await service.start(nowMs: WorkoutServiceTests.t0.unixMs)
        try await rig.feed(WorkoutServiceTests.Session(start: WorkoutServiceTests.t0, runS: 720), to: service)
        let run = try #require(try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }.first)
        #expect(try await rig.store.readStored { try $0.gear(id: "pegasus") }?.runs == 0)
        _ = try await rig.gear.assign(workout: run, to: "pegasus")
        #expect(try await rig.store.readStored { try $0.gear(id: "pegasus") }?.runs == 1)
        _ = try await rig.gear.assign(workout: run, to: nil)
        #expect(try await rig.store.readStored { try $0.gear(id: "pegasus") }?.totalKm == 10)
    }

    @Test("commands are checked before anything is done: ops, ids that would make topics, numbers")
    func commandParsing() throws {
        func parse(_ text: String, _ target: CommandRequest.Target = .gear) -> Result<CommandRequest, QueryError> {
            CommandRequest.parse(Array(text.utf8), target: target)
        }
        #expect(try parse(#"{"op":"add","name":"Pegasus 41!","limit_km":800}"#).get().operation
            == .addGear(id: "pegasus-41", name: "Pegasus 41!", startKm: 0, limitKm: 800))
        #expect(try parse(#"{"op":"start","sport":"run"}"#, .workout).get().operation == .startWorkout(sport: "run"))
        for bad in [
            #"{"op":"add","id":"a/b","name":"x"}"#, ##"{"op":"add","id":"#","name":"x"}"##, #"{"op":"add","name":""}"#,
            #"{"op":"add","name":"x","limit_km":-1}"#, #"{"op":"add","name":"x","start_km":"ten"}"#, #"{"op":"select"}"#,
            #"{"op":"fly"}"#, #"{"op":"list","extra":1}"#, "[]", "not json", #"{"op":"assign","id":"x"}"#,
        ] {
            guard case .failure(let error) = parse(bad) else { Issue.record("accepted \(bad)"); continue }
            #expect(error.status == 400, "\(bad): \(error)")
        }
        guard case .failure(let error) = parse(#"{"op":"start","sport":"Run Fast"}"#, .workout) else { Issue.record("accepted a bad sport"); return }
        #expect(error.status == 400)
        guard case .failure(let large) = parse(String(repeating: " ", count: 5000) + "{}") else { Issue.record("accepted 5000 bytes"); return }
        #expect(large.status == 413)
    }

    static func events(_ rig: WorkoutServiceTests.Rig, _ op: String) async throws -> [[String: Any]] {
        try await rig.inner.queued("\(WorkoutServiceTests.root)/event/gear").filter { $0["op"] as? String == op }
    }

}

/// The workout id is RFC 4122's version 5: the same as Python's `uuid.uuid5` computes.
@Suite("Workout ids")
struct WorkoutIDTests {
    @Test("SHA-1 gives the test vectors of FIPS 180-2 appendix A")
    func sha1() {
        #expect(SHA1.digest(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined() == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).map { String(format: "%02x", $0) }.joined()
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("the workout id is UUIDv5 as Python computes it")
    func uuid() async throws {
        let name = "keepalive:workout:pi:1795248180000"
        let python = try ManagedProcess(
            name: "python3", executable: Tools.find("python3"),
            arguments: ["-c", "import uuid,sys; print(uuid.uuid5(uuid.NAMESPACE_URL, sys.argv[1]))", name])
        try #require(await python.waitForExit(timeout: 30) == 0, "python3: \(python.text)")
        #expect(WorkoutDocument.id(deviceID: "pi", startMs: 1_795_248_180_000) == python.text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("TRIMP: 45 minutes at 150 bpm (resting 60, max 190) is Banister's 75.4")
    func trimp() {
        let start: Int64 = 1_795_248_000_000
        let heartRates = (0...2700).map {
            StoredHeartRate(sensor: "s", timeMs: start + Int64($0) * 1000, receivedMs: 0, bpm: 150, contact: 2, valid: true, raw: [])
        }
        let summary = WorkoutSummary.compute(
            startMs: start, endMs: start + 2_700_000, fixes: [], heartRates: heartRates, steps: [], settings: WorkoutSettings(),
            zones: HeartRateZones(maxHR: 190, restingHR: 60), stepSettings: StepSettings())
        // 45 × 0.6923 × 0.64 e^(1.92 × 0.6923) = 75.36 (the last sample stands for 1 s more).
        #expect(abs((summary.trimp ?? 0) - 75.36) < 0.1, "\(String(describing: summary.trimp))")
    }
}
