import Foundation
import SensorBridge
import Testing
import TestKit

@testable import Agent
@testable import Store

@Suite("Daily health aggregate")
struct DayAggregateTests {
    static let utc = TimeZone(identifier: "UTC")!
    static func settings(_ timeZone: TimeZone = utc, interval: Int = 300) -> AggregateSettings {
        AggregateSettings(timeZone: timeZone, gapLimitMs: 10_000, zones: HeartRateZones(maxHR: 190, restingHR: 60), locationIntervalS: interval)
    }

    static func fixtureLines() throws -> [String] {
        try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n").map(String.init)
    }

    static func heartRate(_ json: JSONValue) -> [String: Any] {
        let object = try? JSONSerialization.jsonObject(with: Data(json.text.utf8)) as? [String: Any]
        return object?["heart_rate"] as? [String: Any] ?? [:]
    }

    @Test("an hour of real data through a real store equals an independent computation: counts, min, max, time-weighted average, resting, zones, RMSSD, coverage")
    func realHour() async throws {
        var lines = try Self.fixtureLines()
        // Two invalid notifications in the middle: 0 bpm, and contact lost at 40 bpm.
        lines.insert(#"{"ts":"2026-11-21T08:30:00.500Z","sensor":"nsr-strap","raw":"0600"}"#, at: 1800)
        lines.insert(#"{"ts":"2026-11-21T08:30:01.500Z","sensor":"nsr-strap","raw":"0428"}"#, at: 1801)
        let received = ISO8601DateFormatter().date(from: "2026-11-21T09:05:00Z")!
        let samples = try lines.compactMap { line in
            BridgeService.stored(try BridgeMessage.parse(Array(line.utf8)).get(), received: received, synchronised: true)
        }
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        try await store.write(heartRates: samples)
        let day = try #require(LocalDay("2026-11-21", timeZone: Self.utc))
        let aggregate = try await DayAggregate.rebuild(day, settings: Self.settings(), store: store, upTo: nil)
        let json = Self.heartRate(aggregate.document(final: true, nowMs: 0).json(seq: 1))
        let reference = try HeartRateReference(lines: lines)

        #expect(json["samples"] as? Int == 3601)
        #expect(json["valid_samples"] as? Int == 3599)
        #expect(json["min"] as? Int == reference.valid.map(\.bpm).min())
        #expect(json["max"] as? Int == reference.valid.map(\.bpm).max())
        #expect(abs((json["avg"] as? Double ?? 0) - reference.average) <= 0.05)
        #expect(abs(Double(json["coverage_s"] as? Int ?? 0) - reference.coverageS) <= 0.5)
        let resting = try #require(reference.resting)
        #expect(abs((json["resting"] as? Double ?? 0) - resting) <= 0.05)
        #expect(json["resting_method"] as? String == "lowest_5min_rolling_mean")
        let zones = try #require(json["zones_s"] as? [Int])
        for (agent, expected) in zip(zones, reference.zonesS(maxHR: 190, restingHR: 60)) { #expect(abs(Double(agent) - expected) <= 0.5) }
        #expect(zones.reduce(0, +) <= json["coverage_s"] as? Int ?? 0)
        let rmssd = try #require(reference.rmssd)
        #expect(abs((json["rmssd_ms"] as? Double ?? 0) - rmssd) <= 0.05)
        #expect((json["zone_scheme"] as? [String: Any])?["kind"] as? String == "hrr")

        // Incremental, one notification at a time as the agent folds them, equals the rebuild.
        var incremental = DayAggregate(day: day, settings: Self.settings())
        for sample in samples.sorted(by: { $0.timeMs < $1.timeMs }) {
            let added = incremental.add(sample)
            #expect(added)
        }
        #expect(incremental.document(final: true, nowMs: 0).canonicalText == aggregate.document(final: true, nowMs: 0).canonicalText)
        // An older sample after newer ones is refused (the day is rebuilt instead).
        let refused = !incremental.add(samples[0])
        #expect(refused)
    }

    @Test("a dropout longer than the stall timeout carries no weight")
    func dropoutCarriesNoWeight() throws {
        func sample(_ seconds: Int64, _ bpm: Int) -> StoredHeartRate {
            StoredHeartRate(sensor: "s", timeMs: seconds * 1000, receivedMs: 0, bpm: bpm, contact: 2, valid: true, raw: [])
        }
        let day = try #require(LocalDay("1970-01-01", timeZone: Self.utc))
        var aggregate = DayAggregate(day: day, settings: Self.settings())
        // 60 bpm for 10 s, then a 1-hour dropout at 200 bpm, then 80 bpm for 10 s.
        for sample in [sample(0, 60), sample(5, 60), sample(10, 200), sample(3610, 80), sample(3615, 80), sample(3620, 80)] {
            _ = aggregate.add(sample)
        }
        let json = Self.heartRate(aggregate.document(final: true, nowMs: 0).json(seq: 1))
        #expect(json["avg"] as? Double == 70)
        #expect(json["coverage_s"] as? Int == 20)
        #expect(json["max"] as? Int == 200)
        #expect(json["resting"] is NSNull, "no 5-minute stretch without a dropout")
    }

    @Test("no data gives nulls, not zeros")
    func noDataGivesNulls() throws {
        let day = try #require(LocalDay("1970-01-01", timeZone: Self.utc))
        let empty = DayAggregate(day: day, settings: Self.settings()).document(final: true, nowMs: 0).json(seq: 7).text
        #expect(empty.contains(#""avg":null"#) && empty.contains(#""min":null"#) && empty.contains(#""zones_s":null"#))
        #expect(empty.contains(#""rmssd_ms":null"#) && empty.contains(#""distance_m":null"#) && empty.contains(#""bbox":null"#))
        #expect(empty.contains(#""steps":null,"steps_source":null,"steps_estimated":null,"cadence":null,"rsc_distance_m":null,"riding":null,"sleep_s":null"#))
        #expect(empty.contains(#""final":true,"seq":7,"heart_rate""#), "seq follows final, as SPEC lists the fields")
    }

    static let localDayCases = [
        ("America/New_York", "2026-03-08", 23, "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00"),
        ("America/New_York", "2026-11-01", 25, "2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00"),
        ("Europe/Berlin", "2026-03-29", 23, "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"),
        ("Europe/Berlin", "2026-10-25", 25, "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00"),
        ("Europe/Berlin", "2026-11-21", 24, "2026-11-21T00:00:00+01:00", "2026-11-22T00:00:00+01:00"),
    ]

    /// One sample a minute from 1 h before to 1 h after the day, stored and aggregated for the day.
    static func localDay(zone: String, date: String) async throws -> (boundsMs: (start: Int64, end: Int64), day: [String: Any]) {
        let timeZone = try #require(TimeZone(identifier: zone))
        let day = try #require(LocalDay(date, timeZone: timeZone))
        let bounds = day.boundsMs
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        var samples: [StoredHeartRate] = []
        var fixes: [StoredFix] = []
        var t = bounds.start - 3_600_000
        while t < bounds.end + 3_600_000 {
            samples.append(StoredHeartRate(sensor: "s", timeMs: t, receivedMs: t, bpm: 70, contact: 2, valid: true, raw: [0x06, 70]))
            fixes.append(StoredFix(timeMs: t, receivedMs: t, lat: 52.5, lon: 13.4, speed: 0, eph: 5, mode: 3, timeSource: "gps"))
            t += 60_000
        }
        try await store.write(fixes: fixes, heartRates: samples)
        let document = try await DayAggregate.rebuild(day, settings: Self.settings(timeZone), store: store, upTo: nil)
            .document(final: true, nowMs: 0).json(seq: 1)
        return (bounds, try #require(try JSONSerialization.jsonObject(with: Data(document.text.utf8)) as? [String: Any]))
    }

    @Test("a local day runs from local midnight to local midnight, 23 and 25 hours on DST days", arguments: localDayCases)
    func localDayBounds(zone: String, date: String, hours: Int, from: String, to: String) async throws {
        let (bounds, object) = try await Self.localDay(zone: zone, date: date)
        #expect(object["from"] as? String == from)
        #expect(object["to"] as? String == to)
        #expect(object["tz"] as? String == zone)
        #expect(bounds.end - bounds.start == Int64(hours) * 3_600_000)
    }

    @Test("samples split at local midnight: each day gets exactly its own", arguments: localDayCases)
    func localDaySamples(zone: String, date: String, hours: Int, from: String, to: String) async throws {
        let object = try await Self.localDay(zone: zone, date: date).day
        let heartRate = try #require(object["heart_rate"] as? [String: Any])
        let location = try #require(object["location"] as? [String: Any])
        #expect(heartRate["samples"] as? Int == hours * 60)
        #expect(location["fixes"] as? Int == hours * 60)
        #expect(location["slots"] as? Int == hours * 12)
        #expect(location["slots_with_fix"] as? Int == hours * 12)
        #expect(location["distance_m"] as? Double == 0)
    }

    /// A receiver parked for an hour, then a 10-minute walk at 1.4 m/s, from one seeded generator:
    /// its position wanders (a slow random walk of several metres plus fix-to-fix noise, as
    /// multipath does), its Doppler speed stays small.
    static func parkedThenWalk() -> (parked: [StoredFix], walk: [StoredFix]) {
        var generator = SeededGenerator(seed: 42)
        func gaussian() -> Double {
            let u1 = max(Double.random(in: 0..<1, using: &generator), 1e-12)
            let u2 = Double.random(in: 0..<1, using: &generator)
            return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        }
        let metresPerDegreeLat = 111_320.0
        let metresPerDegreeLon = 111_320.0 * cos(52.5 * .pi / 180)
        func track(speedMps: Double, seconds: Int) -> [StoredFix] {
            var wanderNorth = 0.0, wanderEast = 0.0
            return (0..<seconds).map { second in
                // Gauss-Markov wander: σ ≈ 6 m, correlation time 5 minutes.
                let decay = exp(-1.0 / 300)
                wanderNorth = wanderNorth * decay + 6 * (1 - decay * decay).squareRoot() * gaussian()
                wanderEast = wanderEast * decay + 6 * (1 - decay * decay).squareRoot() * gaussian()
                let north = wanderNorth + 2.5 * gaussian() + speedMps * Double(second)
                let east = wanderEast + 2.5 * gaussian()
                let speed = abs(speedMps + 0.15 * gaussian())
                return StoredFix(
                    timeMs: Int64(second) * 1000, receivedMs: 0, lat: 52.5 + north / metresPerDegreeLat,
                    lon: 13.4 + east / metresPerDegreeLon, speed: speed, eph: 8, mode: 3, timeSource: "gps")
            }
        }
        let parked = track(speedMps: 0, seconds: 3600)
        return (parked, track(speedMps: 1.4, seconds: 600))
    }

    @Test("a parked receiver's jitter adds < 10 m per hour")
    func parkedJitter() throws {
        var parked = LocationAccumulator(intervalS: 300)
        for fix in Self.parkedThenWalk().parked { _ = parked.add(fix) }
        #expect(parked.distanceM < 10, "parked for an hour measured \(parked.distanceM) m")
        #expect(parked.movingMs == 0)
    }

    @Test("a walk with the same receiver noise is measured")
    func walkMeasured() throws {
        var walk = LocationAccumulator(intervalS: 300)
        for fix in Self.parkedThenWalk().walk { _ = walk.add(fix) }
        #expect(abs(walk.distanceM - 840) < 840 * 0.1, "a 840 m walk measured \(walk.distanceM) m")
        #expect(walk.movingMs >= 590_000)
        #expect(walk.maxSpeed ?? 0 > 1.4)
    }
}
