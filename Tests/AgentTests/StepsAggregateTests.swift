import Foundation
import StepCounting
import Testing
import TestKit

@testable import Agent
@testable import Store

/// The steps part of the day aggregate and the 15-minute timeline, in-process on real stores.
@Suite("Steps in the day aggregate and the timeline")
struct StepsAggregateTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func rsc(_ sensor: String, _ timeMs: Int64, cadence: UInt8, total: UInt32? = nil) -> StoredStepRecord {
        // flags: bit 2 running, bit 1 total distance present; speed 3.0 m/s (0x0300).
        var raw: [UInt8] = [total == nil ? 0x04 : 0x06, 0x00, 0x03, cadence]
        if let total { raw += withUnsafeBytes(of: total.littleEndian, Array.init) }
        return StoredStepRecord(sensor: sensor, timeMs: timeMs, receivedMs: timeMs, rsc: raw)
    }

    static func window(_ sensor: String, _ firstMs: Int64, steps: Int, coveredMs: Int64 = 60_000) -> StoredStepRecord {
        StoredStepRecord(sensor: sensor, firstSampleMs: firstMs, lastSampleMs: firstMs + coveredMs - 20, receivedMs: firstMs, coveredMs: coveredMs, steps: steps)
    }

    static func fields(_ steps: StepsAccumulator) -> [String: Any] {
        let text = JSONValue.object(steps.fields).text
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    static let t0: Int64 = 1_795_248_000_000  // 2026-11-21T08:00:00Z

    @Test("no step record: every step field null")
    func noRecordIsNull() {
        let steps = StepsAccumulator(settings: StepSettings())
        #expect(Self.fields(steps)["steps"] is NSNull && Self.fields(steps)["steps_source"] is NSNull)
    }

    @Test("a worn sensor that saw no movement: a real 0")
    func stillIsZero() {
        var steps = StepsAccumulator(settings: StepSettings())
        for second in 0...60 { _ = steps.add(Self.rsc("pod", Self.t0 + Int64(second) * 1000, cadence: 0)) }
        #expect(Self.fields(steps)["steps"] as? Int == 0)
        #expect(Self.fields(steps)["steps_source"] as? String == "rsc")
    }

    @Test("a stored RSC value that no longer parses (bit rot) is left out and reported, as is a pod's distance reset")
    func anomalies() {
        var steps = StepsAccumulator(settings: StepSettings())
        _ = steps.add(StoredStepRecord(sensor: "pod", timeMs: Self.t0, receivedMs: Self.t0, rsc: [0x06, 0x00]))
        _ = steps.add(Self.rsc("pod", Self.t0 + 1000, cadence: 160, total: 5000))
        _ = steps.add(Self.rsc("pod", Self.t0 + 2000, cadence: 160, total: 10))
        let reported = Dictionary(uniqueKeysWithValues: steps.anomalies.map { ($0.reason, $0.count) })
        #expect(reported == ["unreadable_rsc": 1, "pod_distance_reset": 1])
    }

    static let stridePodSettings = {
        var settings = StepSettings()
        settings.cadenceUnits = ["stride-pod": .strides]
        return settings
    }()

    @Test("cadence_units: a pod that counts strides gives twice the steps")
    func strides() {
        var steps = StepsAccumulator(settings: Self.stridePodSettings)
        for second in 0...60 { _ = steps.add(Self.rsc("stride-pod", Self.t0 + Int64(second) * 1000, cadence: 85)) }
        #expect(Self.fields(steps)["steps"] as? Int == 170)
    }

    @Test("cadence_units: the sensors it does not name keep the default")
    func defaultUnit() {
        #expect(Self.stridePodSettings.unit(for: "other") == .steps)
    }

    /// 08:00–08:15 a pod and a strap on the same run; 08:15–08:30 two straps alone.
    static func podAndStraps() -> StepsAccumulator {
        var steps = StepsAccumulator(settings: StepSettings())
        // 08:00–08:15: pod at 160/min for 10 min (1600) and the strap's estimate of the same run.
        for second in 0...600 { _ = steps.add(Self.rsc("pod", Self.t0 + Int64(second) * 1000, cadence: 160)) }
        for minute in 0..<10 { _ = steps.add(Self.window("h10", Self.t0 + Int64(minute) * 60_000, steps: 155)) }
        // 08:15–08:30: only the strap (and a second strap counting fewer).
        for minute in 15..<20 {
            _ = steps.add(Self.window("h10", Self.t0 + Int64(minute) * 60_000, steps: 100))
            _ = steps.add(Self.window("h10-b", Self.t0 + Int64(minute) * 60_000, steps: 90))
        }
        return steps
    }

    @Test("a foot pod and a strap in the same bucket: the pod's steps, not both")
    func podWinsItsBucket() {
        #expect(Self.podAndStraps().roundedSteps[Self.t0] == 1600)
    }

    @Test("a strap fills the buckets the pod did not cover")
    func strapFillsTheRest() {
        let fields = Self.fields(Self.podAndStraps())
        #expect(fields["steps"] as? Int == 1600 + 500)
        #expect(fields["steps_source"] as? String == "rsc+accelerometer")
        #expect(fields["steps_estimated"] as? Bool == true)
    }

    @Test("two straps in the same bucket give the larger count")
    func largerStrapCount() {
        #expect(Self.podAndStraps().roundedSteps[Self.t0 + 900_000] == 500)
    }

    @Test("an RSC notification older than one folded in asks for a rebuild")
    func olderRSCAsksForRebuild() {
        var steps = StepsAccumulator(settings: StepSettings())
        let newer = steps.add(Self.rsc("pod", Self.t0 + 2000, cadence: 160))
        let older = steps.add(Self.rsc("pod", Self.t0 + 1000, cadence: 160))
        #expect(newer && !older)
    }

    @Test("an accelerometer window older than one folded in does not ask for a rebuild")
    func olderWindowIsFolded() {
        var steps = StepsAccumulator(settings: StepSettings())
        _ = steps.add(Self.rsc("pod", Self.t0 + 2000, cadence: 160))
        _ = steps.add(Self.rsc("pod", Self.t0 + 1000, cadence: 160))
        let laterWindow = steps.add(Self.window("h10", Self.t0 + 60_000, steps: 10))
        let earlierWindow = steps.add(Self.window("h10", Self.t0, steps: 10))
        #expect(laterWindow && earlierWindow)
    }

    @Test("the timeline of the spring DST day in Europe/Berlin: 92 buckets with local times, a record at 03:00 CEST in its quarter")
    func springDaylightSaving() throws {
        let settings = StepSettings()
        let spring = try #require(LocalDay("2026-03-29", timeZone: Self.berlin))
        var short = DayTimeline(day: spring, steps: settings)
        // 2026-03-29T03:00:00+02:00 = 01:00Z: the ninth bucket (00:00–02:00 CET is eight quarters... then the clock jumps).
        let threeCEST: Int64 = 1_774_746_000_000
        short.add(Self.window("h10", threeCEST, steps: 42))
        let buckets = try #require(Self.array(short.json()))
        #expect(buckets.count == 92)
        #expect(buckets.first?["from"] as? String == "2026-03-29T00:00:00+01:00")
        let index = try #require(buckets.firstIndex { $0["from"] as? String == "2026-03-29T03:00:00+02:00" })
        #expect(index == 8 && buckets[index]["steps"] as? Int == 42)
        #expect(buckets.last?["from"] as? String == "2026-03-29T23:45:00+02:00")
    }

    @Test("the timeline of the autumn DST day in Europe/Berlin: 100 buckets, 02:00–03:00 twice")
    func autumnDaylightSaving() throws {
        let settings = StepSettings()
        var long = DayTimeline(day: try #require(LocalDay("2026-10-25", timeZone: Self.berlin)), steps: settings)
        let longBuckets = try #require(Self.array(long.json()))
        #expect(longBuckets.count == 100)
        #expect(longBuckets.filter { ($0["from"] as? String)?.hasPrefix("2026-10-25T02:") == true }.count == 8, "02:00–03:00 twice")
        #expect(longBuckets.allSatisfy { $0["steps"] is NSNull && $0["hr"] is NSNull && $0["distance_m"] is NSNull })
    }

    /// Ten minutes of a pod at 170/min (1700 steps, 1800 m) and ten strap windows of 110.
    static let storedDayRecords = (0...600).map { rsc("pod", t0 + Int64($0) * 1000, cadence: 170, total: 12_345 + UInt32($0) * 30) }
        + (20..<30).map { window("h10", t0 + Int64($0) * 60_000, steps: 110) }

    /// A store in `directory` holding the day's records, each stored.
    static func storedDay(in directory: TemporaryDirectory) async throws -> Store {
        let store = try Store(path: directory.file("k.db"))
        let records = Self.storedDayRecords
        let first = try await store.write(steps: records)
        #expect(first.stepRecordsInserted == records.count)
        return store
    }

    @Test("a replay of a day's step records stores nothing new")
    func storedDayReplay() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.storedDay(in: directory)
        let replay = try await store.write(steps: Self.storedDayRecords)
        #expect(replay.stepRecordsInserted == 0)
        try await Self.expectStoredDaySteps(store)
    }

    @Test("a day in the store: the aggregate's steps equal its timeline's buckets added up")
    func storedDay() async throws {
        let directory = try TemporaryDirectory()
        try await Self.expectStoredDaySteps(try await Self.storedDay(in: directory))
    }

    static func expectStoredDaySteps(_ store: Store) async throws {
        let day = try #require(LocalDay("2026-11-21", timeZone: Self.utc))
        let settings = AggregateSettings(timeZone: Self.utc, gapLimitMs: 10_000, zones: HeartRateZones(maxHR: 190, restingHR: 60), locationIntervalS: 300)
        let aggregate = try await DayAggregate.rebuild(day, settings: settings, store: store, upTo: nil)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(aggregate.document(final: true, nowMs: 0).json(seq: 1).text.utf8)) as? [String: Any])
        #expect(document["steps"] as? Int == 1700 + 1100)
        #expect(abs((document["rsc_distance_m"] as? Double ?? 0) - 1800) < 1e-6)
        let reader = try StoreReader(path: store.path)
        var timeline = try DayTimeline.build(day, settings: settings, reader: reader)
        let buckets = try #require(Self.array(timeline.json()))
        #expect(buckets.compactMap { $0["steps"] as? Int }.reduce(0, +) == 2800)
    }

    static func array(_ json: JSONValue) -> [[String: Any]]? {
        (try? JSONSerialization.jsonObject(with: Data(json.text.utf8))) as? [[String: Any]]
    }
}
