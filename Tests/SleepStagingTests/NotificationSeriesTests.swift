import Testing

@testable import SleepStaging

/// The compact series a night is classified from (issue 32): times kept as offsets from the first.
@Suite("Notification series")
struct NotificationSeriesTests {
    @Test("times come back as appended; an older time, or one over 49 days after the first, is refused and changes nothing")
    func timesRoundTrip() {
        var series = NotificationSeries(sensor: "h10")
        let start: Int64 = 1_795_208_400_123
        let times = [start, start, start + 1, start + 86_400_000, start + 86_400_000 + 999]
        for (index, time) in times.enumerated() {
            let added = series.append(timeMs: time, bpm: 60 + index, valid: true, rr1024: [1000, 1010])
            #expect(added)
        }
        #expect(Array(series.timesMs) == times)
        #expect(series.timesMs.last == times.last)
        #expect(Array(series.timesMs[1..<3]) == [start, start + 1], "a slice reads the same times")

        let older = series.append(timeMs: start + 5, bpm: 70, valid: true, rr1024: [])
        #expect(!older, "older than the newest")
        let tooLate = series.append(timeMs: start + Int64(UInt32.max) + 1, bpm: 70, valid: true, rr1024: [900])
        #expect(!tooLate, "past what an offset holds")
        #expect(series.count == times.count && series.validCount == times.count, "nothing added by a refused notification")
        let lastHeld = series.append(timeMs: start + Int64(UInt32.max), bpm: 70, valid: false, rr1024: [900])
        #expect(lastHeld, "the last millisecond an offset holds")
        #expect(series.timesMs.last == start + Int64(UInt32.max))
        #expect(series.rrIntervals(at: 5) == [900] && series.rrIntervals(at: 0) == [1000, 1010])
        #expect((0..<5).map { series.bpm(at: $0) } == [60, 61, 62, 63, 64] && series.isValid(at: 0))
        #expect(series.bpm(at: 5) == nil && !series.isValid(at: 5), "an invalid notification has no rate")
    }

    @Test("a valid notification keeps its rate and stays valid at any rate; an invalid one has none")
    func rateAndValidity() {
        var series = NotificationSeries(sensor: "h10")
        for (time, bpm, valid) in [(Int64(0), 0, true), (1, 250, true), (2, 300, true), (3, 72, false)] {
            _ = series.append(timeMs: time, bpm: bpm, valid: valid, rr1024: [])
        }
        #expect((0..<4).map { series.bpm(at: $0) } == [1, 250, 255, nil], "kept within 1–255: the agent's valid rates are 25–250")
        #expect((0..<4).map { series.isValid(at: $0) } == [true, true, true, false])
        #expect(series.validCount == 3)
    }

    @Test("a series may start at any time, negative included")
    func negativeStart() {
        var series = NotificationSeries(sensor: "h10")
        let added = [series.append(timeMs: -5_000, bpm: 50, valid: true, rr1024: []), series.append(timeMs: 2_000, bpm: 50, valid: true, rr1024: [])]
        #expect(added == [true, true])
        #expect(Array(series.timesMs) == [-5_000, 2_000])
    }

    @Test("a series' arrays grow by an eighth, not double: a night of notifications holds at most an eighth more than it keeps")
    func gentleGrowth() {
        var values: [UInt32] = []
        var worst = 0.0
        for value in 0..<200_000 {
            values.appendGrowingGently(UInt32(value))
            if values.count > 40_000 { worst = max(worst, Double(values.capacity) / Double(values.count)) }
        }
        #expect(values == Array(0..<200_000), "the values appended, in order")
        #expect(worst <= 1.15, "room for at most an eighth more (and malloc's rounding): \(worst)")
        var doubled: [UInt32] = []
        var doubledWorst = 0.0
        for value in 0..<200_000 {
            doubled.append(UInt32(value))
            if doubled.count > 40_000 { doubledWorst = max(doubledWorst, Double(doubled.capacity) / Double(doubled.count)) }
        }
        #expect(doubledWorst > 1.9, "what append alone holds, for comparison: \(doubledWorst)")
    }

    @Test("every notification's RR intervals come back across blocks of ends, empty ones and the largest included")
    func rrAcrossBlocks() {
        var series = NotificationSeries(sensor: "h10")
        var expected: [[Int]] = []
        for index in 0..<1_000 {
            // 0–3 intervals mostly; a full 511 now and then, so that blocks fill their 16-bit ends.
            let count = index % 97 == 5 ? NotificationSeries.maxRRPerNotification : index % 4
            let intervals = (0..<count).map { 600 + (index * 7 + $0) % 500 }
            _ = series.append(timeMs: Int64(index) * 1000, bpm: 60, valid: true, rr1024: intervals)
            expected.append(intervals)
        }
        let long = (0..<600).map { 700 + $0 }
        _ = series.append(timeMs: 1_000_000, bpm: 60, valid: true, rr1024: long)
        expected.append(Array(long.prefix(NotificationSeries.maxRRPerNotification)))
        #expect(series.indices.map { series.rrIntervals(at: $0) } == expected)
        #expect(series.indices.map { series.hasRR(at: $0) } == expected.map { !$0.isEmpty })
        #expect(series.rrSum(at: 1_000) == expected[1_000].reduce(0, +), "a notification's intervals past 511 are left out")
    }
}
