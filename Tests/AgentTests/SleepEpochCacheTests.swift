import Foundation
import SensorBridge
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import SleepStaging
@testable import Store

/// Sleep features computed once per epoch and kept in the store (issue 32, docs/storage.md "Sleep
/// epochs"), on a night assembled from the real hour of MIT-BIH NSR intervals
/// (`AssembledNightLines`, Tests/Fixtures/hr/nsr-60min.ndjson) in a real store.
@Suite("Kept sleep epochs")
struct SleepEpochCacheTests {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    static let settings = AggregateSettings(
        timeZone: zone, gapLimitMs: 10_000, zones: HeartRateZones(maxHR: 190, restingHR: 60), locationIntervalS: 300)
    /// 22:00 CET on 20 November 2026; the night is credited to the 21st.
    static let eveningMs: Int64 = 1_795_208_400_000
    static let morning = LocalDay("2026-11-21", timeZone: zone)!

    static func samples(_ lines: [String]) throws -> [StoredHeartRate] {
        try lines.map { line in
            let message = try BridgeMessage.parse(Array(line.utf8)).get()
            let timeMs = Int64(((message.timestamp?.timeIntervalSince1970 ?? 0) * 1000).rounded())
            return BridgeService.stored(message.sensor, try #require(message.heartRate), raw: message.raw, timeMs: timeMs, received: Date())
        }
    }

    static func epochRows(_ store: Store) async throws -> SleepEpochRead {
        try await store.readStored { try $0.sleepEpochs(sensor: "h10", fromS: 0, toS: .max) }
    }

    /// The epochs of the whole stored night, through a cache holding what `store` kept.
    static func epochs(_ store: Store, samples: [StoredHeartRate]) async throws -> (epochs: [SleepEpoch], cache: SleepEpochCache) {
        let cache = SleepEpochCache(sensor: "h10", read: try await epochRows(store))
        return (cache.epochs(of: NightSamples.Series(samples, sensor: "h10"), samples.indices, timeZone: zone, gapLimitMs: 10_000), cache)
    }

    @Test("a night computed hour by hour as its beats arrive, reusing kept epochs, equals the night computed from scratch, epoch for epoch")
    func incrementalEqualsFromScratch() async throws {
        let samples = try Self.samples(try AssembledNightLines.lines(startMs: Self.eveningMs, hours: 9))
        let store = try Store(path: try TemporaryDirectory("epochs").file("k.db"))
        let hourly = stride(from: 0, to: samples.count, by: 3600).map { samples[$0..<min($0 + 3600, samples.count)] }
        var nights: [SleepNight] = []
        for hour in hourly {
            try await store.write(heartRates: Array(hour))
            nights.append(try await SleepNight.compute(Self.morning, settings: Self.settings, store: store, upTo: nil))
        }
        let kept = try await Self.epochRows(store)
        #expect(kept.epochs.count > 1000, "a 9-hour night keeps ~1060 complete epochs: \(kept.epochs.count)")

        let (incremental, cache) = try await Self.epochs(store, samples: samples)
        let scratch = SleepEpochCache(sensor: "h10").epochs(of: NightSamples.Series(samples, sensor: "h10"), samples.indices, timeZone: Self.zone, gapLimitMs: 10_000)
        #expect(incremental == scratch, "the kept epochs give the same labels and probabilities as computing every epoch")
        #expect(cache.computed <= 20, "only the epochs whose window is not complete are computed again: \(cache.computed)")

        let fresh = try Store(path: try TemporaryDirectory("epochs-scratch").file("k.db"))
        try await fresh.write(heartRates: samples)
        let fromScratch = try await SleepNight.compute(Self.morning, settings: Self.settings, store: fresh, upTo: nil)
        #expect(nights.last == fromScratch, "the night itself is the same")
        #expect(fromScratch.main != nil, "the assembled night has a main sleep period")
    }

    @Test("a late backlog inside kept epochs: the night equals the one computed from scratch, and epochs before it are reused")
    func lateBacklog() async throws {
        let samples = try Self.samples(try AssembledNightLines.lines(startMs: Self.eveningMs, hours: 6))
        // 20 minutes at 01:00 come late (a strap's backlog): first everything else.
        let late = (3 * 3600)..<(3 * 3600 + 1200)
        let store = try Store(path: try TemporaryDirectory("epochs-late").file("k.db"))
        try await store.write(heartRates: Array(samples[..<late.lowerBound]) + Array(samples[late.upperBound...]))
        _ = try await SleepNight.compute(Self.morning, settings: Self.settings, store: store, upTo: nil)
        try await store.write(heartRates: Array(samples[late]))
        let (withBacklog, cache) = try await Self.epochs(store, samples: samples)
        let scratch = SleepEpochCache(sensor: "h10").epochs(of: NightSamples.Series(samples, sensor: "h10"), samples.indices, timeZone: Self.zone, gapLimitMs: 10_000)
        #expect(withBacklog == scratch)
        let before = (late.lowerBound * 1000 / 30_000) - 20
        #expect(cache.reused >= before, "the epochs whose window ends before the backlog are reused: \(cache.reused) of \(scratch.count), computed \(cache.computed)")
        print("late backlog of 20 min in a 6-h night: \(cache.computed) epochs computed again, \(cache.reused) reused")
    }

    @Test("a landing night prepared tail by tail hands over, round by round, exactly the epochs prepared from the whole night so far")
    func tailByTail() throws {
        let samples = try Self.samples(try AssembledNightLines.lines(startMs: Self.eveningMs, hours: 3))
        // The night as it lands, 600 notifications at a time, prepared as `RunningDay` prepares it
        // (`tail`), or from the whole night so far each time.
        func rounds(tail: Bool) -> [[StoredSleepEpoch]] {
            let cache = SleepEpochCache(sensor: "h10")
            var preparedThrough: Int64?
            return (Array(stride(from: 600, to: samples.count, by: 600)) + [samples.count]).map { end in
                let landed = NightSamples.Series(Array(samples[..<end]), sensor: "h10")
                cache.prepare(
                    of: landed, landed.indices, timeZone: Self.zone, gapLimitMs: 10_000,
                    fromMs: tail ? preparedThrough.map { $0 - RunningDay.tailMarginMs } : nil)
                preparedThrough = landed.timesMs.last
                return cache.takeFresh()
            }
        }
        let byTail = rounds(tail: true)
        #expect(byTail == rounds(tail: false))
        // And what is kept at the end is the whole night's: an epoch at a round's edge may be
        // handed over again once the beats after it land, the last one is the one kept.
        let whole = SleepEpochCache(sensor: "h10")
        whole.prepare(of: NightSamples.Series(samples, sensor: "h10"), samples.indices, timeZone: Self.zone, gapLimitMs: 10_000)
        let expected = whole.takeFresh()
        #expect(expected.count > 300, "3 hours keep their complete epochs: \(expected.count)")
        let kept = Dictionary(byTail.joined().map { ($0.startS, $0) }) { _, later in later }
        #expect(kept == Dictionary(uniqueKeysWithValues: expected.map { ($0.startS, $0) }))
    }

    /// Two hours of the night stored, classified (its epochs kept), the store closed and reopened.
    static func keptAndReopened(_ label: String) async throws -> (samples: [StoredHeartRate], path: String, keptCount: Int, reopened: Store) {
        let samples = try Self.samples(try AssembledNightLines.lines(startMs: Self.eveningMs, hours: 2))
        let path = try TemporaryDirectory(label).file("k.db")
        var store: Store? = try Store(path: path)
        try await store?.write(heartRates: samples)
        _ = try await SleepNight.compute(Self.morning, settings: Self.settings, store: try #require(store), upTo: nil)
        let keptCount = try await Self.epochRows(try #require(store)).epochs.count
        store = nil  // closed, as after a crash; what was committed is there
        return (samples, path, keptCount, try Store(path: path))
    }

    @Test("kept epochs survive a reopen")
    func keptEpochsSurviveReopen() async throws {
        let (_, _, keptCount, reopened) = try await Self.keptAndReopened("epochs-reopen")
        #expect(keptCount > 200, "a 2-hour night keeps its complete epochs: \(keptCount)")
        #expect(try await Self.epochRows(reopened).epochs.count == keptCount)
    }

    @Test("a kept epoch that rotted on the card is computed again, not served, and kept anew")
    func damagedRowIsRecomputed() async throws {
        let (samples, path, keptCount, reopened) = try await Self.keptAndReopened("epochs-damage")
        #expect(try await Self.epochRows(reopened).epochs.count == keptCount)

        // One byte of one vector flipped behind the store's back.
        let raw = try SQLiteConnection(path: path)
        try raw.execute("UPDATE sleep_epoch SET vector = CAST(zeroblob(length(vector)) AS BLOB) WHERE start_s = (SELECT min(start_s) FROM sleep_epoch)")
        let damaged = try await Self.epochRows(reopened)
        #expect(damaged.failedCheck == 1 && damaged.epochs.count == keptCount - 1)

        let (epochs, cache) = try await Self.epochs(reopened, samples: samples)
        #expect(cache.failedCheck == 1)
        #expect(epochs == SleepEpochCache(sensor: "h10").epochs(of: NightSamples.Series(samples, sensor: "h10"), samples.indices, timeZone: Self.zone, gapLimitMs: 10_000))
        _ = try await SleepNight.compute(Self.morning, settings: Self.settings, store: reopened, upTo: nil)
        let repaired = try await Self.epochRows(reopened)
        #expect(repaired.failedCheck == 0 && repaired.epochs.count == keptCount, "computed again and kept")
    }

    /// A query engine over a stored 2-hour night, counting the epochs it hands over to be kept;
    /// it holds the store and its folder for as long as the caller keeps it.
    private struct QueryRig {
        let engine: QueryEngine
        let handed: LockedEpochs
        let store: Store
        let directory: TemporaryDirectory
    }

    private static func queryEngine() async throws -> QueryRig {
        let samples = try Self.samples(try AssembledNightLines.lines(startMs: Self.eveningMs, hours: 2))
        let directory = try TemporaryDirectory("epochs-query")
        let path = directory.file("k.db")
        let store = try Store(path: path)
        try await store.write(heartRates: samples)
        await store.foldForReaders()
        let engine = QueryEngine(storePath: path, settings: Self.settings, maxReplyBytes: .max, deviceID: "test")
        let handed = LockedEpochs()
        engine.keeping.epochs = { handed.add($0.count) }
        return QueryRig(engine: engine, handed: handed, store: store, directory: directory)
    }

    static let queryTime = Date(timeIntervalSince1970: 1_795_400_000)

    @Test("a query for location alone computes no sleep")
    func locationAloneNoSleep() async throws {
        let rig = try await Self.queryEngine()
        let (engine, handed) = (rig.engine, rig.handed)
        let location = engine.answer(QueryRequest(date: "2026-11-21", include: [.location], track: .fiveMinutes, format: .json), now: Self.queryTime)
        #expect(location.status == 200)
        #expect(handed.count == 0, "location alone: no night classified")
    }

    @Test("a query with health computes the night and hands its epochs to the writer")
    func onlyWhatWasAsked() async throws {
        let rig = try await Self.queryEngine()
        let (engine, handed) = (rig.engine, rig.handed)
        let now = Self.queryTime
        let health = engine.answer(QueryRequest(date: "2026-11-21", include: [.health], track: .fiveMinutes, format: .json), now: now)
        #expect(health.status == 200)
        #expect(handed.count > 100, "the night's epochs were computed and handed over to be kept: \(handed.count)")
    }
}

private final class LockedEpochs: Sendable {
    private let total = Mutex(0)
    func add(_ count: Int) { total.withLock { $0 += count } }
    var count: Int { total.withLock { $0 } }
}
