import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

@Suite("Heart-rate day summary")
struct HeartRateSummaryTests {
    @Test("an hour of real data: min, max and time-weighted average equal an independent computation; invalid samples excluded")
    func realHour() async throws {
        let lines = try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n")
        let received = ISO8601DateFormatter().date(from: "2026-11-21T09:05:00Z")!
        var samples = try lines.map { line in
            HeartRateService.stored(try BridgeMessage.parse(Array(line.utf8)).get(), received: received, synchronised: true)
        }
        // Two invalid notifications in the middle: 0 bpm, and contact lost at 40 bpm.
        for (raw, offsetS) in [([UInt8]([0x06, 0x00]), 1800.5), ([0x04, 0x28], 1801.5)] {
            let message = BridgeMessage(
                sensor: "nsr-strap", timestamp: ISO8601DateFormatter().date(from: "2026-11-21T08:00:00Z")!.addingTimeInterval(offsetS),
                seq: nil, raw: raw, measurement: try HeartRateMeasurement.parse(raw).get())
            samples.append(HeartRateService.stored(message, received: received, synchronised: true))
        }
        // Through a real store and back, as a day query reads it.
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        try await store.write(heartRates: samples)
        let day = try #require(LocalDay("2026-11-21", timeZone: TimeZone(identifier: "UTC")!))
        let stored = try await store.heartRates(fromMs: day.boundsMs.start, toMs: day.boundsMs.end)
        let summary = HeartRateSummary.compute(stored, gapLimitMs: 10_000)

        // Independent: straight from the fixture's plain "bpm" and "ts" fields.
        var points: [(t: Double, bpm: Int)] = []
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            points.append((formatter.date(from: object["ts"] as! String)!.timeIntervalSince1970, object["bpm"] as! Int))
        }
        var weighted = 0.0, covered = 0.0
        for index in 0..<(points.count - 1) {
            let gap = points[index + 1].t - points[index].t
            if gap <= 10 { weighted += Double(points[index].bpm) * gap; covered += gap }
        }
        #expect(summary.samples == 3601)
        #expect(summary.validSamples == 3599)
        #expect(summary.min == points.map(\.bpm).min())
        #expect(summary.max == points.map(\.bpm).max())
        #expect(summary.min != 0, "0 bpm is not a heart rate")
        #expect(abs((summary.average ?? 0) - weighted / covered) < 1e-9)
        #expect(summary.coverageS == covered)
    }

    @Test("a dropout longer than the stall timeout carries no weight")
    func gapsCarryNoWeight() {
        func sample(_ seconds: Int64, _ bpm: Int) -> StoredHeartRate {
            StoredHeartRate(sensor: "s", timeMs: seconds * 1000, receivedMs: 0, bpm: bpm, contact: 2, valid: true, raw: [])
        }
        // 60 bpm for 10 s, then a 1-hour dropout at 200 bpm, then 80 bpm for 10 s.
        let summary = HeartRateSummary.compute(
            [sample(0, 60), sample(5, 60), sample(10, 200), sample(3610, 80), sample(3615, 80), sample(3620, 80)], gapLimitMs: 10_000)
        #expect(summary.average == 70)
        #expect(summary.coverageS == 20)
        #expect(summary.max == 200)
        #expect(HeartRateSummary.compute([], gapLimitMs: 10_000).average == nil)
    }
}
