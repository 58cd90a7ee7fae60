import Bus
import Foundation
import Logging
import Testing
import TestKit

@testable import Agent
@testable import Store

/// Workout detection, saving and announcing in-process (the pattern of ServicesInProcessTests):
/// a real store file, the real writer and outbox, the service driven tick by tick with the
/// samples' time as its clock. Tracks are synthesised (NMEALog.loop: a circle of known length);
/// heart rate is synthesised too. The same detection through gpsd and a bridge process is in
/// WorkoutEndToEndTests.
@Suite("Workouts in-process")
struct WorkoutServiceTests {
    static let root = "keepalive/p"
    static let t0 = Date(timeIntervalSince1970: 1_795_248_000)  // 2026-11-21T08:00:00Z

    /// Fixes and heart rate of a session: standing `beforeS`, moving `runS` around the loop,
    /// standing `afterS`; heart rate `rest`, `work` and `recovery` bpm in those parts.
    struct Session {
        var fixes: [StoredFix] = []
        var heartRates: [StoredHeartRate] = []
        var runStart: Date
        var runEnd: Date

        init(start: Date, beforeS: Int = 180, runS: Int = 1200, afterS: Int = 420, speedMps: Double = 3, rest: Int = 70, work: Int = 150, recovery: Int = 100) {
            runStart = start.addingTimeInterval(Double(beforeS))
            runEnd = runStart.addingTimeInterval(Double(runS))
            let points = NMEALog.standing(start: start, seconds: beforeS)
                + NMEALog.loop(start: runStart, seconds: runS, speedMps: speedMps)
                + NMEALog.standing(start: runEnd, seconds: afterS)
            fixes = points.map(Self.fix)
            for (index, point) in points.enumerated() {
                let bpm = index < beforeS ? rest : index < beforeS + runS ? min(work, rest + (index - beforeS) / 2) : recovery
                heartRates.append(Self.heartRate(point.time, bpm: bpm))
            }
        }

        static func fix(_ point: NMEALog.Point) -> StoredFix {
            let ms = point.time.unixMs
            return StoredFix(
                timeMs: ms, receivedMs: ms, lat: point.lat, lon: point.lon, altMSL: point.altitudeM, speed: point.speedMps,
                track: point.courseDeg, eph: 4, mode: 3, satellites: 9, timeSource: "gps")
        }

        static func heartRate(_ time: Date, bpm: Int) -> StoredHeartRate {
            let ms = time.unixMs
            return StoredHeartRate(sensor: "strap", timeMs: ms, receivedMs: ms, bpm: bpm, contact: 2, valid: true, raw: [0x06, UInt8(bpm)])
        }
    }

    struct Rig {
        let inner: ServicesInProcessTests.Rig
        let clock: ServicesInProcessTests.ManualClock
        let gear: GearBook
        var store: Store { inner.store }

        init(autoCredit: Bool = true) throws {
            inner = try ServicesInProcessTests.Rig()
            clock = ServicesInProcessTests.ManualClock(WorkoutServiceTests.t0)
            gear = GearBook(store: inner.store, writer: inner.writer, topicRoot: WorkoutServiceTests.root, clock: clock.agent, autoCredit: autoCredit, logger: Logger(label: "test"))
        }

        func service() -> WorkoutService {
            let settings = AggregateSettings(
                timeZone: TimeZone(identifier: "Europe/Berlin")!, gapLimitMs: 10_000, zones: HeartRateZones(maxHR: 190, restingHR: 60),
                locationIntervalS: 300)
            return WorkoutService(
                settings: WorkoutSettings(), aggregate: settings, deviceID: "pi", topicRoot: WorkoutServiceTests.root, store: inner.store,
                writer: inner.writer, gear: gear, clock: clock.agent, logger: Logger(label: "test"))
        }

        /// Stores the samples in one-minute chunks as they would arrive live, ticking the service after each.
        func feed(_ session: Session, to service: WorkoutService, from: Int = 0, to end: Int? = nil) async throws {
            let last = end ?? session.fixes.count
            var index = from
            while index < last {
                let next = min(index + 60, last)
                try await store.write(fixes: Array(session.fixes[index..<next]), heartRates: Array(session.heartRates[index..<next]))
                clock.set(Date(timeIntervalSince1970: Double(session.fixes[next - 1].timeMs) / 1000 + 1))
                try await service.tick(nowMs: clock.now().unixMs)
                index = next
            }
        }

        func events(_ op: String? = nil) async throws -> [[String: Any]] {
            try await inner.queued("\(WorkoutServiceTests.root)/event/workout").filter { op == nil || $0["op"] as? String == op }
        }
    }

    /// A 20-minute run at 3 m/s around a loop fed to the service, then fed again, then the service
    /// restarted: run once (in-process, a real store) for the claims below.
    struct OneRun: Sendable {
        let runStart: Date
        let runEnd: Date
        let startedIDs: [String?]
        let finishedIDs: [String?]
        let allEvents: String
        let savedStartMs: Int64?
        /// The workout/last messages queued, as JSON.
        let lastMessages: [String]
        let messagesBeforeReplay: Int
        let messagesAfterRestart: Int
        let stored: [(version: Int, id: String)]
    }

    static let oneRun = Task { () async throws -> OneRun in
        let rig = try Rig()
        let session = Session(start: Self.t0)
        let service = rig.service()
        try await service.start(nowMs: Self.t0.unixMs)
        try await rig.feed(session, to: service)

        let started = try await rig.events("started")
        let finished = try await rig.events("finished")
        let all = try await rig.events()
        var savedStartMs: Int64?
        if let id = finished.first?["id"] as? String { savedStartMs = try await rig.store.readStored({ try $0.workout(id: id) })?.startMs }
        let lastMessages = try await rig.inner.queued("\(Self.root)/workout/last")
            .map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }

        // The same samples again (a bridge replaying its memory): nothing stored, nothing announced.
        let messagesBefore = try await rig.store.pendingMessages(afterID: 0, limit: 10_000).count
        try await rig.feed(session, to: service)
        // The agent restarted: it looks back, finds the same workout, saved as it was.
        let restarted = rig.service()
        try await restarted.start(nowMs: rig.clock.now().unixMs)
        try await restarted.tick(nowMs: rig.clock.now().unixMs + 60_000)
        let messagesAfter = try await rig.store.pendingMessages(afterID: 0, limit: 10_000).count
        let stored = try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }
        return OneRun(
            runStart: session.runStart, runEnd: session.runEnd, startedIDs: started.map { $0["id"] as? String },
            finishedIDs: finished.map { $0["id"] as? String }, allEvents: "\(all)", savedStartMs: savedStartMs,
            lastMessages: lastMessages, messagesBeforeReplay: messagesBefore, messagesAfterRestart: messagesAfter,
            stored: stored.map { ($0.version, $0.id) })
    }

    /// The finished workout's id, once exactly one was started and finished.
    static func oneRunID() async throws -> String {
        let outcome = try await oneRun.value
        try #require(outcome.startedIDs.count == 1 && outcome.finishedIDs.count == 1, "events: \(outcome.allEvents)")
        return try #require(outcome.finishedIDs[0])
    }

    static func oneRunLast() async throws -> [String: Any] {
        let text = try #require(try await oneRun.value.lastMessages.last)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("a 20-minute run: started and finished announced once each, under the workout's id")
    func oneRunAnnounced() async throws {
        let outcome = try await Self.oneRun.value
        let id = try await Self.oneRunID()
        #expect(outcome.startedIDs[0] == id)
        #expect(id == WorkoutDocument.id(deviceID: "pi", startMs: try #require(outcome.savedStartMs)))
    }

    @Test("a 20-minute run: workout/last is queued with the workout's record")
    func oneRunLastRetained() async throws {
        let id = try await Self.oneRunID()
        let last = try await Self.oneRunLast()
        #expect(last["id"] as? String == id && last["version"] as? Int == 1 && last["sport"] as? String == "run" && last["source"] as? String == "auto")
        #expect(try #require(last["moving_s"] as? Double) > 1150)
        #expect((try #require(last["splits"] as? [[String: Any]])).count == 4, "3 whole km and the rest")
        let hr = try #require(last["hr"] as? [String: Any])
        #expect(hr["max"] as? Int == 150)
        #expect((hr["zones_s"] as? [Double])?.count == 5)
        #expect(try #require(last["trimp"] as? Double) > 0)
    }

    @Test("a 20-minute run at 3 m/s around a loop: one workout, distance within 2 % of the track")
    func oneRun() async throws {
        let last = try await Self.oneRunLast()
        let distance = try #require(last["distance_m"] as? Double)
        #expect(abs(distance - 3600) / 3600 < 0.02, "distance \(distance) m against the loop's 3600 m")
    }

    @Test("a 20-minute run: the workout starts and ends within 30 s of the run, in local time")
    func oneRunStartAndEnd() async throws {
        let outcome = try await Self.oneRun.value
        let session = (runStart: outcome.runStart, runEnd: outcome.runEnd)
        let last = try await Self.oneRunLast()
        let startText = try #require(last["start"] as? String)
        let endText = try #require(last["end"] as? String)
        let start = try #require(ISO8601DateFormatter().date(from: startText))
        let end = try #require(ISO8601DateFormatter().date(from: endText))
        #expect(abs(start.timeIntervalSince(session.runStart)) <= 30, "start \(start) vs \(session.runStart)")
        #expect(abs(end.timeIntervalSince(session.runEnd)) <= 30, "end \(end) vs \(session.runEnd)")
        #expect(last["start"] as? String == ISO8601.formatLocal(start, timeZone: TimeZone(identifier: "Europe/Berlin")!), "local time with offset")
    }

    @Test("a 20-minute run replayed and the service restarted: nothing new stored or announced")
    func oneRunReplayAndRestart() async throws {
        let outcome = try await Self.oneRun.value
        #expect(outcome.messagesAfterRestart == outcome.messagesBeforeReplay)
        #expect(outcome.stored.count == 1 && outcome.stored.first?.version == 1)
    }

    @Test("the agent restarts in the middle of a run: one workout with the id announced when it started")
    func restartMidRun() async throws {
        let rig = try Rig()
        let session = Session(start: Self.t0)
        let first = rig.service()
        try await first.start(nowMs: Self.t0.unixMs)
        let cut = 180 + 12 * 60
        try await rig.feed(session, to: first, to: cut)
        let started = try await rig.events("started")
        let all = try await rig.events()
        try #require(started.count == 1, "announced after 10 minutes and 500 m: \(all)")
        #expect(try await rig.store.readStored { try $0.openWorkouts() }.count == 1)

        let second = rig.service()
        try await second.start(nowMs: rig.clock.now().unixMs)
        try await rig.feed(session, to: second, from: cut)
        #expect(try await rig.events("started").count == 1, "not announced again")
        let finished = try await rig.events("finished")
        try #require(finished.count == 1)
        #expect(finished[0]["id"] as? String == started[0]["id"] as? String)
        #expect(try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }.count == 1)
        #expect(try await rig.store.readStored { try $0.openWorkouts() }.isEmpty)
    }

    @Test("a fever day: heart rate high and steady all day while sitting, and a 3-minute walk: no workout")
    func feverDay() async throws {
        let rig = try Rig()
        // Threshold with resting 60 and max 190: 60 + 0.45 × 130 = 118.5 bpm; the fever keeps it at 125.
        let session = Session(start: Self.t0, beforeS: 1500, runS: 180, afterS: 900, speedMps: 1.4, rest: 125, work: 125, recovery: 125)
        let service = rig.service()
        try await service.start(nowMs: Self.t0.unixMs)
        try await rig.feed(session, to: service)
        let events = try await rig.events()
        #expect(events.isEmpty, "\(events)")
        #expect(try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max, finishedOnly: false) }.isEmpty)
    }

    @Test("started by command: kept however short, announced, and detection finds nothing of its own inside it")
    func manual() async throws {
        let rig = try Rig()
        let session = Session(start: Self.t0, beforeS: 60, runS: 300, afterS: 60)
        let service = rig.service()
        try await service.start(nowMs: Self.t0.unixMs)
        rig.clock.set(Self.t0.addingTimeInterval(30))
        let open = try await service.startManual(sport: "walk")
        await #expect(throws: WorkoutService.ManualError.self) { try await service.startManual(sport: nil) }
        try await rig.feed(session, to: service)
        let stopped = try await service.stopManual(sport: nil)
        #expect(stopped.id == open.id && stopped.finished && stopped.source == "manual" && stopped.sport == "walk")
        #expect(stopped.distanceM > 800, "5 minutes at 3 m/s inside it: \(stopped.distanceM)")
        #expect(try await rig.events("finished").count == 1)
        #expect(try await rig.store.readStored { try $0.workouts(fromMs: 0, toMs: .max) }.count == 1)
        await #expect(throws: WorkoutService.ManualError.self) { try await service.stopManual(sport: nil) }
    }
}
