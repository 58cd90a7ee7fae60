import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// When a workout ends follows from the data's own times, not from how fast it arrives (issue 45):
/// in-process, the rows handed over in chunks as `[store] fold_s` hands them, while the agent's
/// time of day runs ahead at a replay's pace (before synchronisation it follows the newest fix's
/// GPS time) and little real time passes. The same through gpsd and the agent process:
/// ArrivalIndependenceTests.
@Suite("Workouts end on the data's time")
struct WorkoutHorizonTests {
    /// A 10× replay folded a minute at a time: 10 minutes of data per chunk, 60 s of real time
    /// (the monotonic clock) between chunks, the agent's time of day 10 minutes further each time.
    @Test("a run handed over 10 minutes at a time, 60 s of real time apart: one workout, ending where the run ends")
    func chunkedReplay() async throws {
        let rig = try WorkoutServiceTests.Rig()
        let session = WorkoutServiceTests.Session(start: WorkoutServiceTests.t0)
        let service = rig.service()
        try await service.start(nowMs: WorkoutServiceTests.t0.unixMs)
        var index = 0
        var storedMs = WorkoutServiceTests.t0.unixMs
        while index < session.fixes.count {
            let next = min(index + 600, session.fixes.count)
            try await rig.store.write(fixes: Array(session.fixes[index..<next]), heartRates: Array(session.heartRates[index..<next]))
            storedMs = session.fixes[next - 1].timeMs
            index = next
            // Real time: 60 s in 5-s polls. The time of day: where the replay has got meanwhile,
            // up to 10 minutes past what is stored.
            for poll in 1...12 {
                rig.clock.set(rig.clock.now().addingTimeInterval(5))
                try await service.tick(nowMs: storedMs + Int64(poll) * 50_000)
            }
        }
        // The replay has ended: the time of day goes on from the last fix at the real pace.
        for poll in 1...70 {
            rig.clock.set(rig.clock.now().addingTimeInterval(5))
            try await service.tick(nowMs: storedMs + Int64(poll) * 5_000)
        }
        let workouts = try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }
        try #require(workouts.count == 1, "one run, one workout: \(workouts.map { ($0.startMs, $0.endMs, $0.distanceM) })")
        let end = try #require(workouts[0].endMs)
        #expect(abs(end - session.runEnd.unixMs) <= 30_000, "ends at \(end), the run at \(session.runEnd.unixMs)")
        #expect(abs(workouts[0].distanceM - 3600) / 3600 < 0.02, "\(workouts[0].distanceM) m of 3600 m")
    }

    @Test("a stream counts up to its newest sample while it delivers, and stops counting only after end_pause_s of real silence")
    func streamHorizon() {
        typealias Horizon = WorkoutDetector.Horizon
        #expect(Horizon.stream(newestMs: 1_000, silentForMs: 299_999, endPauseMs: 300_000) == 1_000)
        #expect(Horizon.stream(newestMs: 1_000, silentForMs: 300_000, endPauseMs: 300_000) == nil)
        #expect(Horizon.stream(newestMs: nil, silentForMs: 10_000, endPauseMs: 300_000) == 0, "nothing yet: holds everything back")
    }
}
