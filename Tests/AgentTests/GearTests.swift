import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// Shoes: two pairs, runs credited to the selected one, idempotent by workout id, moved by
/// assign, the limit announced once (in-process, real store, see WorkoutServiceTests).
@Suite("Gear")
struct GearTests {
    @Test("two pairs, one selected: two runs credited to it; a replay credits nothing new; assign moves a run; 80 % and 100 % announced once each")
    func credits() async throws {
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

        let runs = try await rig.store.workouts(fromMs: 0, toMs: .max)
        try #require(runs.count == 2, "\(runs)")
        var pegasus = try #require(try await rig.store.gear(id: "pegasus"))
        #expect(pegasus.runs == 2)
        #expect(abs(pegasus.totalKm - (runs[0].distanceM + runs[1].distanceM) / 1000) < 1e-9)
        let credited = try await events(rig, "credited")
        #expect(credited.count == 2 && credited.allSatisfy { $0["gear"] as? String == "pegasus" })
        #expect(Set(credited.compactMap { $0["workout"] as? String }) == Set(runs.map(\.id)))
        var limits = try await events(rig, "limit")
        #expect(limits.map { $0["percent"] as? Int } == [80, 100], "both crossed by the second run: \(limits)")
        #expect(limits.last?["message"] as? String == "time for new shoes")

        // A replay, and the credit asked again: nothing new.
        try await rig.feed(second, to: service)
        try await rig.gear.workoutFinished(runs[1])
        #expect(try await events(rig, "credited").count == 2)
        #expect(try await rig.store.gear(id: "pegasus")?.runs == 2)

        // The second run was in the trail shoes: moved, and back again — 100 % is not announced twice.
        _ = try await rig.gear.assign(workout: runs[1], to: "trail")
        pegasus = try #require(try await rig.store.gear(id: "pegasus"))
        let trail = try #require(try await rig.store.gear(id: "trail"))
        #expect(pegasus.runs == 1 && abs(pegasus.totalKm - runs[0].distanceM / 1000) < 1e-9)
        #expect(trail.runs == 1 && abs(trail.totalKm - (120 + runs[1].distanceM / 1000)) < 1e-9)
        _ = try await rig.gear.assign(workout: runs[1], to: "pegasus")
        limits = try await events(rig, "limit")
        #expect(limits.count == 2, "each limit once: \(limits)")

        // Retained gear/<id> carries the totals.
        let retained = try await rig.inner.queued("\(WorkoutServiceTests.root)/gear/pegasus")
        #expect(retained.last?["runs"] as? Int == 2 && retained.last?["name"] as? String == "Pegasus 41")
        #expect(abs((retained.last?["total_km"] as? Double ?? 0) - (runs[0].distanceM + runs[1].distanceM) / 1000) < 0.001)
    }

    @Test("auto_credit off: a run waits unassigned until assigned")
    func manualCredit() async throws {
        let rig = try WorkoutServiceTests.Rig(autoCredit: false)
        _ = try await rig.gear.add(id: "pegasus", name: "Pegasus", startKm: 10, limitKm: 800)
        _ = try await rig.gear.select(id: "pegasus")
        let service = rig.service()
        try await service.start(nowMs: WorkoutServiceTests.t0.unixMs)
        try await rig.feed(WorkoutServiceTests.Session(start: WorkoutServiceTests.t0, runS: 720), to: service)
        let run = try #require(try await rig.store.workouts(fromMs: 0, toMs: .max).first)
        #expect(try await rig.store.gear(id: "pegasus")?.runs == 0)
        _ = try await rig.gear.assign(workout: run, to: "pegasus")
        #expect(try await rig.store.gear(id: "pegasus")?.runs == 1)
        _ = try await rig.gear.assign(workout: run, to: nil)
        #expect(try await rig.store.gear(id: "pegasus")?.totalKm == 10)
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

    private func events(_ rig: WorkoutServiceTests.Rig, _ op: String) async throws -> [[String: Any]] { try await Self.events(rig, op) }
}

/// The workout id is RFC 4122's version 5: the same as Python's `uuid.uuid5` computes.
@Suite("Workout ids")
struct WorkoutIDTests {
    @Test("SHA-1 test vectors (FIPS 180-2 appendix A) and UUIDv5 as Python computes it")
    func uuid() async throws {
        #expect(SHA1.digest(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined() == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).map { String(format: "%02x", $0) }.joined()
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
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
