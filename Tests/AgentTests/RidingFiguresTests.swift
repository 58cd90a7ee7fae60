import Foundation
import SensorBridge
import Store
import Testing
import TestKit

@testable import Agent
@testable import Store

/// The day's `riding` figures (`RidingFigures`) from stored CSC rows, in-process: a recorded
/// Zwift Hub sequence (github.com/Berg0162/simcline issue 7, as CSCRevolutionsTests reads it)
/// through a real store and the day's computation, and synthesised sequences built by hand to
/// hit one rule each — a wheel count wrapping, a stop of over 64 s, a reset, a combined sensor
/// that alternates wheel and crank notifications.
@Suite("Riding figures")
struct RidingFiguresTests {
    static let utc = TimeZone(identifier: "UTC") ?? .current
    static let start: Int64 = 1_764_000_000_000  // 2025-11-24T16:00Z

    static func settings(circumferenceMm: Int = 2105) -> AggregateSettings {
        var settings = AggregateSettings(
            timeZone: utc, gapLimitMs: 10_000, zones: HeartRateZones(maxHR: 190, restingHR: 60), locationIntervalS: 300)
        settings.sensors[CyclingKind.wheelCircumferenceMm] = Double(circumferenceMm)
        return settings
    }

    static func row(_ seconds: Double, _ hex: String, sensor: String = "bike") -> StoredCSCMeasurement {
        let time = start + Int64((seconds * 1000).rounded())
        return StoredCSCMeasurement(sensor: sensor, timeMs: time, receivedMs: time, raw: HexBytes.decode(hex) ?? [])
    }

    static func object(_ value: JSONValue) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(value.text.utf8))) as? [String: Any] ?? [:]
    }

    /// The `riding` object the rows give, added in the order given.
    static func riding(_ rows: [StoredCSCMeasurement], circumferenceMm: Int = 2105) -> [String: Any]? {
        var figures = RidingFigures(settings: settings(circumferenceMm: circumferenceMm))
        for row in rows { _ = figures.add(row) }
        return object(.object(figures.fields))["riding"] as? [String: Any]
    }

    /// Receive time (s after 16:02:00) and value, as logged by nRF Connect.
    static let zwiftHub: [(Double, String)] = [
        (0.017, "03a4000000184e4000a74c"), (0.871, "03a600000072524100c050"), (2.008, "03a7000000a6544200c754"),
        (3.007, "03a900000008594300c658"), (4.010, "03ab000000645d4400c55c"), (5.149, "03ad0000009f614500ce60"),
    ]

    @Test("the recorded Zwift Hub sequence through a real store and the day: 9 wheel turns, 5 crank turns at 59.5 rpm")
    func recordedZwiftHub() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        var batch = SampleBatch()
        batch[CyclingKind.self] = Self.zwiftHub.map { Self.row($0.0, $0.1, sensor: "zwift-hub") }
        try await store.write(batch)
        let day = try #require(LocalDay("2025-11-24", timeZone: Self.utc))
        // As a query and the publisher read a day: through a read-only connection.
        let aggregate = try DayAggregate.build(day, settings: Self.settings(), reader: try StoreReader(path: directory.file("k.db")))
        let health = Self.object(aggregate.document(final: true, nowMs: 0).json(seq: 1))
        let riding = try #require(health["riding"] as? [String: Any], "\(health)")
        // 0xa4 → 0xad wheel, 0x40 → 0x45 crank; crank events 0x4ca7 → 0x60ce = 5159/1024 s.
        #expect(riding["wheel_revolutions"] as? Int == 9 && riding["crank_revolutions"] as? Int == 5, "\(riding)")
        #expect(riding["distance_m"] as? Double == 18.9, "9 × 2.105 m = 18.945: \(riding)")
        #expect(riding["cadence_avg_rpm"] as? Double == 59.5, "5 × 60 × 1024 / 5159 = 59.55: \(riding)")
        #expect(riding["pedalling_s"] as? Double == 5.0 && riding["rolling_s"] as? Double == 4.9, "5159 and 4999 / 1024 s: \(riding)")
        // Steps of at least a second: 1049, 1031 and 1033 ticks for one turn each; the fastest is 59.6 rpm.
        #expect(riding["cadence_max_rpm"] as? Double == 59.6, "\(riding)")
        // The tests' read through the writer (DayReadsThroughStore) gives the same day.
        let rebuilt = try await DayAggregate.rebuild(day, settings: Self.settings(), store: store, upTo: nil)
        #expect(rebuilt.document(final: true, nowMs: 0).json(seq: 1) == aggregate.document(final: true, nowMs: 0).json(seq: 1))
    }

    @Test("no CSC rows: riding is null, not zeros")
    func noSensor() {
        var figures = RidingFigures(settings: Self.settings())
        #expect(JSONValue.object(figures.fields).text == #"{"riding":null}"#)
        let added = figures.add(Self.row(0, "03a4000000184e4000a74c"))
        #expect(added)
        #expect(JSONValue.object(figures.fields).text != #"{"riding":null}"#, "one row: figures, zeros")
    }

    @Test("synthesised: a wheel count wrapping at 2^32 and a stop of 100 s: every turn counted, the stop not rolling, distance = turns × circumference")
    func wrapAndLongStop() throws {
        var rows = [
            Self.row(0, "01feffffffe803"),  // 2^32 − 2 turns, event 1000
            Self.row(1, "0101000000e807"),  // 1 (wrapped: 3 turns), event 2024
        ]
        // Stopped: the same value for 100 s, then the next turn, its event time past a wrap.
        rows += (2...101).map { Self.row(Double($0), "0101000000e807") }
        let resumed = (2024 + 101 * 1024) % 65_536  // 39_912
        rows.append(Self.row(102, "0103000000" + String(format: "%02x%02x", resumed & 0xFF, resumed >> 8)))
        let next = resumed + 1024
        rows.append(Self.row(103, "0105000000" + String(format: "%02x%02x", next & 0xFF, next >> 8)))
        let riding = try #require(Self.riding(rows, circumferenceMm: 2096))
        #expect(riding["wheel_revolutions"] as? Int == 7, "3 across the wrap, 2 after the stop (untimed), 2 more: \(riding)")
        #expect(riding["distance_m"] as? Double == 14.7, "7 × 2.096 m = 14.672: \(riding)")
        #expect(riding["rolling_s"] as? Double == 2.0, "the stop and the untimed step are not rolling: \(riding)")
        #expect(riding["crank_revolutions"] as? Int == 0 && riding["cadence_avg_rpm"] is NSNull, "a speed sensor has no cadence: \(riding)")
    }

    @Test("synthesised: a crank count set back (a battery change) counts nothing for that step, then counts on from the new base")
    func reset() throws {
        let riding = try #require(Self.riding([
            Self.row(0, "028813" + "3075"),  // 5000 turns, event 30000
            Self.row(1, "028913" + "3079"),  // 5001, event 31024: 1 in 1 s
            Self.row(2, "020300" + "8403"),  // 3, event 900: a reset
            Self.row(3, "020400" + "8407"),  // 4, event 1924: 1 in 1 s
        ]))
        #expect(riding["crank_revolutions"] as? Int == 2, "\(riding)")
        #expect(riding["pedalling_s"] as? Double == 2.0 && riding["cadence_avg_rpm"] as? Double == 60.0, "\(riding)")
        #expect(riding["cadence_max_rpm"] as? Double == 60.0, "\(riding)")
        #expect(riding["wheel_revolutions"] as? Int == 0 && riding["distance_m"] as? Double == 0, "a cadence sensor has no distance")
    }

    @Test("synthesised: a combined sensor alternating wheel and crank notifications counts both")
    func alternating() throws {
        let sent = ["01452301000004", "02c8000008", "01472301000008", "02c900000c", "01482301000010"]
        let riding = try #require(Self.riding(sent.enumerated().map { Self.row(Double($0.offset) * 0.5, $0.element) }))
        #expect(riding["wheel_revolutions"] as? Int == 3 && riding["rolling_s"] as? Double == 3.0, "\(riding)")
        #expect(riding["distance_m"] as? Double == 6.3, "3 × 2.105 m = 6.315: \(riding)")
        #expect(riding["crank_revolutions"] as? Int == 1 && riding["cadence_avg_rpm"] as? Double == 60.0, "\(riding)")
    }

    @Test("two sensors in a day add up; a row older than one added asks for the day again")
    func twoSensorsAndOrder() throws {
        var figures = RidingFigures(settings: Self.settings())
        let hub = Self.zwiftHub.map { Self.row($0.0, $0.1, sensor: "hub") }
        let alternating = ["01452301000004", "02c8000008", "01472301000008", "02c900000c", "01482301000010"]
            .enumerated().map { Self.row(10 + Double($0.offset) * 0.5, $0.element, sensor: "road") }
        for row in (hub + alternating).sorted(by: { $0.timeMs < $1.timeMs }) {
            let added = figures.add(row)
            #expect(added, "in time order")
        }
        let riding = try #require(Self.object(.object(figures.fields))["riding"] as? [String: Any])
        #expect(riding["wheel_revolutions"] as? Int == 12 && riding["crank_revolutions"] as? Int == 6, "\(riding)")
        #expect(riding["distance_m"] as? Double == 25.3, "12 × 2.105 m = 25.26: \(riding)")
        let older = figures.add(hub[2])
        #expect(!older, "older than the hub's last: the day is computed again")
    }

    @Test("a synthesised 20-minute ride, counts wrapping: the figures its construction gives")
    func synthesisedRide() throws {
        let ride = SynthesisedRide(startMs: Self.start, seconds: 1200)
        let rows = ride.notifications.map { StoredCSCMeasurement(sensor: ride.sensor, timeMs: $0.timeMs, receivedMs: $0.timeMs, raw: $0.raw) }
        let riding = try #require(Self.riding(rows, circumferenceMm: 2100))
        let expected = ride.expected(circumferenceMm: 2100)
        #expect(ride.wheelRevolutions == 3957 && ride.crankRevolutions == 1699, "the construction: 3.3 turns/s, 85 rpm")
        #expect(riding["wheel_revolutions"] as? Int == ride.wheelRevolutions && riding["crank_revolutions"] as? Int == ride.crankRevolutions)
        #expect(riding["distance_m"] as? Double == expected.distanceM, "\(riding) vs \(expected)")
        #expect(riding["rolling_s"] as? Double == expected.rollingS && riding["cadence_avg_rpm"] as? Double == expected.cadenceAvg, "\(riding)")
        #expect(abs((riding["cadence_avg_rpm"] as? Double ?? 0) - 85) <= 0.1 && abs((riding["cadence_max_rpm"] as? Double ?? 0) - 85) <= 0.5)
    }
}
