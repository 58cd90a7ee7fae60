import Foundation
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import Store

/// Days followed between queries (issue 32, `RunningDays`): three hours of a night assembled from
/// the real hour of MIT-BIH NSR intervals (`AssembledNightLines`) land hour by hour in a real store,
/// as a strap's backlog would, while the engine follows the store between queries.
@Suite("Days followed between queries")
struct RunningDaysTests {
    static let settings = SleepEpochCacheTests.settings
    static let morning = SleepEpochCacheTests.morning
    static let queryTime = SleepEpochCacheTests.queryTime
    static let request = QueryRequest(date: "2026-11-21", include: [.health, .location], track: .fiveMinutes, format: .json)

    struct Outcome {
        /// Followed before the first query: after the first hour, and once the backlog was in.
        var followedAfterFirstHour: Bool
        var nightBeforeQuery: Bool
        /// Epochs computed and handed to be kept while the hours landed, before the quiet round.
        var epochsWhileLanding: Int
        var followed: QueryReply
        var fromScratch: QueryReply
        var sleepSeconds: Double?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let samples = try SleepEpochCacheTests.samples(try AssembledNightLines.lines(startMs: SleepEpochCacheTests.eveningMs, hours: 3))
        let directory = try TemporaryDirectory("running-days")
        let path = directory.file("k.db")
        let store = try Store(path: path)
        let engine = QueryEngine(storePath: path, settings: settings, maxReplyBytes: .max, deviceID: "test")
        let handed = Mutex(0)
        engine.keeping.epochs = { epochs in handed.withLock { $0 += epochs.count } }
        _ = engine.follow(now: queryTime)
        var followedAfterFirstHour = false
        for hour in stride(from: 0, to: samples.count, by: 3600) {
            try await store.write(heartRates: Array(samples[hour..<min(hour + 3600, samples.count)]))
            await store.foldForReaders()
            #expect(engine.follow(now: queryTime), "rows arrived: follow again soon")
            if hour == 0 { followedAfterFirstHour = engine.running.isFollowed(morning) }
        }
        let epochsWhileLanding = handed.withLock { $0 }
        #expect(!engine.follow(now: queryTime), "nothing new in the quiet round")
        let nightBeforeQuery = engine.running.hasCurrentNight(morning)
        let followed = engine.answer(request, now: queryTime)
        let fromScratch = QueryEngine(storePath: path, settings: settings, maxReplyBytes: .max, deviceID: "test").answer(request, now: queryTime)
        let health = (try? JSONSerialization.jsonObject(with: Data(followed.body))) as? [String: Any]
        let sleepSeconds = (health?["health"] as? [String: Any])?["sleep_s"] as? Double
        return Outcome(
            followedAfterFirstHour: followedAfterFirstHour, nightBeforeQuery: nightBeforeQuery, epochsWhileLanding: epochsWhileLanding,
            followed: followed, fromScratch: fromScratch,
            sleepSeconds: sleepSeconds)
    }

    @Test("a past day that new rows arrive for is followed before anyone asks for it")
    func followedBeforeAsked() async throws {
        #expect(try await Self.outcome.value.followedAfterFirstHour)
    }

    @Test("while the backlog lands, its complete epochs are computed and handed to be kept")
    func epochsWhileLanding() async throws {
        let count = try await Self.outcome.value.epochsWhileLanding
        #expect(count > 100, "the first hour alone holds ~110 complete epochs: \(count)")
    }

    @Test("its night is classified between queries once the backlog is in")
    func nightBeforeQuery() async throws {
        #expect(try await Self.outcome.value.nightBeforeQuery)
    }

    @Test("a followed day answers byte for byte as the same day computed from scratch")
    func sameAsFromScratch() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.followed.status == 200)
        #expect(outcome.followed.body == outcome.fromScratch.body, "\(String(decoding: outcome.followed.body, as: UTF8.self))")
    }

    @Test("the night it answers with holds sleep")
    func nightHoldsSleep() async throws {
        let seconds = try #require(try await Self.outcome.value.sleepSeconds, "sleep_s in the reply")
        #expect(seconds > 3600, "three hours of a real night's beats: \(seconds) s of sleep")
    }

    @Test("the span of rows stored after a cursor names the days they touch, an evening's the next day too")
    func pastDaysTouched() throws {
        let zone = Self.settings.timeZone
        let today = LocalDay("2026-11-25", timeZone: zone)!
        // 20:00 and 23:00 CET on 20 November 2026: the 20th, and the night of the 21st.
        let evening: Int64 = 1_795_201_200_000
        let days = RunningDays.pastDays(touchedBy: (evening, evening + 3 * 3_600_000), timeZone: zone, today: today)
        #expect(days.map(\.description) == ["2026-11-20", "2026-11-21"])
        let live = RunningDays.pastDays(touchedBy: (1_795_600_000_000, 1_795_600_100_000), timeZone: zone, today: today)
        #expect(live.isEmpty, "rows of today are not a past day: \(live.map(\.description))")
    }
}
