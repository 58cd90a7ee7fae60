import Foundation
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import Store

/// What the agent's query engine holds of a past day once a backlog has filled it (issue 32: a
/// Pi Zero holds the nights still landing, not every day followed). A night classified and
/// kept lets its window's notifications go when the rows landing are all past it; a day not
/// followed is resumed from its kept folds and night instead of its rows. Each answer is
/// compared byte for byte with an engine that computes the day from its rows. The store, the
/// night (the real NSR hour assembled into 3 hours) and the fixes are `KeptDayFoldTests`'.
@Suite("Settled days")
struct SettledDayTests {
    static let day = KeptDayFoldTests.day
    static let request = KeptDayFoldTests.request
    static let queryTime = KeptDayFoldTests.queryTime

    /// What the agent's engine handed its writer to keep.
    final class Handed: Sendable {
        let folds = Mutex<[StoredDayFold]>([])
        let nights = Mutex<[StoredSleepNight]>([])
    }

    struct Rig {
        let path: String
        let store: Store
        let agent: QueryEngine
        /// The night's notifications stored.
        let samples: [StoredHeartRate]
        /// The agent's engine's first answer for the day, computed from its rows.
        let agentAnswer: QueryReply
        let handed: Handed
        let directory: TemporaryDirectory
        var folds: [StoredDayFold] { handed.folds.withLock { $0 } }
        var nights: [StoredSleepNight] { handed.nights.withLock { $0 } }
    }

    /// The night and the fixes stored, and the agent's engine having answered for the day once
    /// and followed the store twice (a round to see the day quiet, one to hand its folds over).
    static func rig() async throws -> Rig {
        let samples = try SleepEpochCacheTests.samples(try AssembledNightLines.lines(startMs: SleepEpochCacheTests.eveningMs, hours: 3))
        let directory = try TemporaryDirectory("settled-day")
        let path = directory.file("s.db")
        let store = try Store(path: path)
        try await store.write(fixes: KeptDayFoldTests.fixes, heartRates: samples)
        await store.foldForReaders()
        let agent = QueryEngine(storePath: path, settings: KeptDayFoldTests.settings, maxReplyBytes: .max, deviceID: "test")
        let handed = Handed()
        agent.keeping.dayFold = { fold in handed.folds.withLock { $0.append(fold) } }
        agent.keeping.night = { night in handed.nights.withLock { $0.append(night) } }
        let answer = agent.answer(request, now: queryTime)
        _ = agent.follow(now: queryTime)
        _ = agent.follow(now: queryTime)
        return Rig(path: path, store: store, agent: agent, samples: samples, agentAnswer: answer, handed: handed, directory: directory)
    }

    /// The day computed from its rows by an engine that never saw it.
    static func fromRows(_ rig: Rig) -> String {
        let engine = QueryEngine(storePath: rig.path, settings: KeptDayFoldTests.settings, maxReplyBytes: .max, deviceID: "test")
        return text(engine.answer(request, now: queryTime))
    }

    static func text(_ reply: QueryReply) -> String { String(decoding: reply.body, as: UTF8.self) }

    /// A notification at `timeMs` (a strap's backlog landing late; off the whole second, as the
    /// store takes one notification per sensor and instant).
    static func notification(at timeMs: Int64) -> StoredHeartRate {
        StoredHeartRate(
            sensor: "h10", timeMs: timeMs, receivedMs: timeMs, bpm: 61, contact: 2, energyKJ: nil, valid: true, raw: [0x06, 61])
    }

    /// The window's end, 18:00 on the day: rows after it are the next night's.
    static let windowEndMs = SleepNight.window(of: day).end

    @Test("a kept night lets its window go once the rows landing are past it, and the day answers as from its rows")
    func letGo() async throws {
        let rig = try await Self.rig()
        #expect(rig.agent.running.holdsNight(Self.day) == true, "a day just computed holds its night window")
        try await rig.store.write(heartRates: [Self.notification(at: Self.windowEndMs + 3_600_000)])
        await rig.store.foldForReaders()
        _ = rig.agent.follow(now: Self.queryTime)
        _ = rig.agent.follow(now: Self.queryTime)
        #expect(!rig.nights.isEmpty, "its night was handed to be kept")
        #expect(rig.agent.running.holdsNight(Self.day) == false, "the backlog is past the night: its window is let go")
        #expect(Self.text(rig.agent.answer(Self.request, now: Self.queryTime)) == Self.fromRows(rig))
    }

    @Test("a notification landing in a night let go has the day computed again from its rows")
    func lateInNightLetGo() async throws {
        let rig = try await Self.rig()
        try await rig.store.write(heartRates: [Self.notification(at: Self.windowEndMs + 3_600_000)])
        await rig.store.foldForReaders()
        _ = rig.agent.follow(now: Self.queryTime)
        _ = rig.agent.follow(now: Self.queryTime)
        try #require(rig.agent.running.holdsNight(Self.day) == false)
        // In the night, an hour after it began: older than the strap's newest notification.
        try await rig.store.write(heartRates: [Self.notification(at: SleepEpochCacheTests.eveningMs + 3_600_517)])
        await rig.store.foldForReaders()
        let answer = Self.text(rig.agent.answer(Self.request, now: Self.queryTime))
        #expect(answer == Self.fromRows(rig))
        #expect(rig.agent.running.holdsNight(Self.day) == true, "computed again, the night's window is held")
    }

    /// The kept folds and night saved as the agent's writer saves them, and an engine that
    /// never saw the day (the agent restarted).
    static func restarted(_ rig: Rig, samplesBy more: Int = 0) async throws -> QueryEngine {
        let fold = try #require(rig.folds.first { $0.date == "\(Self.day)" }, "the day's folds were handed to be kept")
        try await rig.store.saveDayFold(more == 0 ? fold : try KeptDayFoldTests.altered(fold, samplesBy: more))
        for night in rig.nights { try await rig.store.saveSleepNight(night) }
        return QueryEngine(storePath: rig.path, settings: KeptDayFoldTests.settings, maxReplyBytes: .max, deviceID: "test")
    }

    @Test("after a restart, a past day is resumed from its kept folds and night, its window not read")
    func resumed() async throws {
        let rig = try await Self.rig()
        let expected = Self.fromRows(rig)
        let engine = try await Self.restarted(rig)
        #expect(Self.text(engine.answer(Self.request, now: Self.queryTime)) == expected)
        #expect(engine.running.holdsNight(Self.day) == false, "resumed, not read")
        #expect(Self.text(engine.answer(Self.request, now: Self.queryTime)) == expected, "and answers the same next time")
    }

    @Test("the kept folds are what a resumed day answers with while its rows are unchanged")
    func resumedServesFolds() async throws {
        let rig = try await Self.rig()
        let counted = try #require(try KeptDayFoldTests.samplesCounted(rig.agent.answer(Self.request, now: Self.queryTime)))
        let engine = try await Self.restarted(rig, samplesBy: 7)
        #expect(try KeptDayFoldTests.samplesCounted(engine.answer(Self.request, now: Self.queryTime)) == counted + 7)
    }

    @Test("a notification landing in a resumed day's night has it computed again from its rows")
    func lateInResumed() async throws {
        let rig = try await Self.rig()
        let engine = try await Self.restarted(rig)
        _ = engine.answer(Self.request, now: Self.queryTime)
        try #require(engine.running.holdsNight(Self.day) == false)
        try await rig.store.write(heartRates: [Self.notification(at: SleepEpochCacheTests.eveningMs + 3_600_517)])
        await rig.store.foldForReaders()
        #expect(Self.text(engine.answer(Self.request, now: Self.queryTime)) == Self.fromRows(rig))
        #expect(engine.running.holdsNight(Self.day) == true)
    }

    @Test("past days asked before a backlog fills them hold at most four nights once it lands, and answer as from their rows")
    func monthThenBacklog() async throws {
        let directory = try TemporaryDirectory("settled-month")
        let path = directory.file("m.db")
        let store = try Store(path: path)
        let settings = KeptDayFoldTests.settings
        let agent = QueryEngine(storePath: path, settings: settings, maxReplyBytes: .max, deviceID: "test")
        // Ten days before the query time's day, asked while they are empty.
        var days: [LocalDay] = []
        var day = LocalDay(containing: Self.queryTime, timeZone: settings.timeZone)
        for _ in 0..<10 {
            day = day.previous
            days.append(day)
        }
        try await store.write(heartRates: [Self.notification(at: days[9].boundsMs.start - 86_400_000)])
        await store.foldForReaders()
        for asked in days { _ = agent.answer(QueryRequest(date: "\(asked)", include: [.health]), now: Self.queryTime) }
        _ = agent.follow(now: Self.queryTime)
        #expect(agent.running.followedCount == 10, "every day asked is followed")
        #expect(agent.running.nightsHeld == 0, "an empty day holds no night")
        // A backlog of all ten: a notification a minute (synthesised: plumbing, not accuracy).
        let backlog = days.flatMap { landed in
            stride(from: SleepNight.window(of: landed).start + 517, to: landed.boundsMs.end, by: 60_000).map { Self.notification(at: $0) }
        }
        try await store.write(heartRates: Array(Set(backlog.map(\.timeMs))).sorted().map { Self.notification(at: $0) })
        await store.foldForReaders()
        _ = agent.follow(now: Self.queryTime)
        #expect(agent.running.nightsHeld <= RunningDays.maximumNightsHeld)
        let fresh = QueryEngine(storePath: path, settings: settings, maxReplyBytes: .max, deviceID: "test")
        for asked in days {
            let request = QueryRequest(date: "\(asked)", include: [.health])
            #expect(Self.text(agent.answer(request, now: Self.queryTime)) == Self.text(fresh.answer(request, now: Self.queryTime)), "\(asked)")
        }
        #expect(agent.running.nightsHeld <= RunningDays.maximumNightsHeld)
    }
}
