import Testing

@testable import SleepStaging

@Suite("Beats from a strap's notifications")
struct RRSeriesBuilderTests {
    /// 2026-11-21T08:00:00Z, the fixture's start (its first beat).
    static let fixtureStart = 1_795_248_000.0

    static func rebuiltHour() throws -> SleepRecording {
        var builder = RRSeriesBuilder()
        builder.add(contentsOf: NSRFixture.shared.notifications)
        return try builder.recording(utcOffsetSeconds: 0)
    }

    @Test("the real hour's notifications give back every interval, but where a 5-minute slot moved its anchor (by under 20 ms)")
    func rebuildsTheHour() throws {
        let fixture = NSRFixture.shared
        let recording = try Self.rebuiltHour()
        #expect(recording.rr.intervals.count == fixture.intervalsMs.count)
        #expect(!recording.rr.intervals.contains { $0.isNaN }, "no gap in the fixture")
        var moved = 0
        for (rebuilt, ms) in zip(recording.rr.intervals, fixture.intervalsMs) where rebuilt != (Double(ms) * 1.024).rounded() / 1024 {
            moved += 1
            #expect(abs(rebuilt - Double(ms) / 1000) < 0.02)
        }
        print("strap beats: \(moved) intervals moved with their slot's anchor")
        #expect(moved <= 12, "at most one per 5-minute slot of the hour")
    }

    @Test("the real hour's notifications give beat times within 50 ms of the truth")
    func beatTimes() throws {
        let fixture = NSRFixture.shared
        let recording = try Self.rebuiltHour()
        var worst = 0.0
        var elapsedMs = 0
        for (end, ms) in zip(recording.rr.endTimes, fixture.intervalsMs) {
            elapsedMs += ms
            worst = max(worst, abs(recording.startUnix + end - (Self.fixtureStart + Double(elapsedMs) / 1000)))
        }
        print("strap beats: worst beat time error \(worst * 1000) ms over \(fixture.intervalsMs.count) beats")
        #expect(worst < 0.05)
        #expect(abs(recording.startUnix - Self.fixtureStart) < 0.05)
    }

    @Test("a gap longer than the dropout limit, an invalid notification and lost beats each make one unknown interval")
    func gapsBecomeUnknownIntervals() throws {
        var builder = RRSeriesBuilder(gapLimitMs: 10_000, maxDelayMs: 2_500)
        var time: Int64 = 1_000_000
        func beat(_ count: Int = 1, every ms: Int64 = 1000) {
            for _ in 0..<count {
                time += ms
                builder.add(HeartRateNotification(timeMs: time, rr1024: [1024]))
            }
        }
        beat(20)
        time += 30_000                      // strap off for 30 s: more than the 10-s dropout limit
        beat(20)
        time += 1000
        builder.add(HeartRateNotification(timeMs: time, rr1024: [1024], valid: false))
        beat(20)
        time += 4000                        // 4 s of beats never reported, notifications 5 s apart
        beat(20)
        let recording = try builder.recording(utcOffsetSeconds: 0)
        let unknown = recording.rr.intervals.indices.filter { recording.rr.intervals[$0].isNaN }
        #expect(unknown.count == 3)
        #expect(recording.rr.intervals.filter { !$0.isNaN }.count == 80)
        // After each gap the beats carry on at the notifications' times, not the chain's.
        let lastEnd = recording.startUnix + (recording.rr.endTimes.last ?? 0)
        #expect(abs(lastEnd - Double(time) / 1000) < 0.01)
    }

    @Test("notifications that come late keep the beats on the earliest consistent timing")
    func lateNotificationsDoNotShiftBeats() throws {
        var builder = RRSeriesBuilder()
        // Beats every 0.8 s; notifications at whole seconds carry the beats that ended since the
        // last one, some delivered 300 ms late.
        let beats = (1...100).map { Double($0) * 0.8 }
        var index = 0
        for second in 1...80 {
            var rr: [Int] = []
            while index < beats.count && beats[index] <= Double(second) {
                rr.append(Int(0.8 * 1024))
                index += 1
            }
            let late: Int64 = second % 7 == 0 ? 300 : 0
            builder.add(HeartRateNotification(timeMs: 5_000_000 + Int64(second) * 1000 + late, rr1024: rr))
        }
        let recording = try builder.recording(utcOffsetSeconds: 0)
        #expect(!recording.rr.intervals.contains { $0.isNaN })
        let spacing = zip(recording.rr.endTimes.dropFirst(), recording.rr.endTimes).map { $0 - $1 }
        #expect(spacing.allSatisfy { abs($0 - Double(Int(0.8 * 1024)) / 1024) < 1e-9 })
        // The first beat ended at 5000.8 s; the chain may start at most the strap's reporting delay late.
        let firstEnd = recording.startUnix + recording.rr.endTimes[0]
        #expect(firstEnd >= 5000.8 - 1e-6 && firstEnd < 5000.8 + 0.25)
    }

    @Test("a recording start after the first beat is refused")
    func startAfterFirstBeat() {
        var builder = RRSeriesBuilder()
        builder.add(HeartRateNotification(timeMs: 10_000, rr1024: [1024]))
        #expect(throws: SleepStagingError.self) { try builder.recording(startUnix: 100, utcOffsetSeconds: 0) }
    }

    @Test("a recording built onto the epoch grid is the recording moved onto it afterwards, bit for bit")
    func builtOnTheGridEqualsAligned() throws {
        // The real hour moved off the 30-s grid by 7.3 s, and by nothing.
        for shiftMs in [Int64(7_300), 0] {
            var builder = RRSeriesBuilder()
            builder.add(contentsOf: NSRFixture.shared.notifications.map { HeartRateNotification(timeMs: $0.timeMs + shiftMs, rr1024: $0.rr1024, valid: $0.valid) })
            let aligned = try builder.recording(utcOffsetSeconds: 3600).alignedToEpochGrid()
            let built = try builder.recording(utcOffsetSeconds: 3600, onEpochGrid: true)
            #expect(built.startUnix == aligned.startUnix && built.startUnix.truncatingRemainder(dividingBy: 30) == 0)
            #expect(built.utcOffsetSeconds == aligned.utcOffsetSeconds)
            #expect(built.rr.endTimes.map(\.bitPattern) == aligned.rr.endTimes.map(\.bitPattern), "shift \(shiftMs) ms")
            #expect(built.rr.intervals.map(\.bitPattern) == aligned.rr.intervals.map(\.bitPattern))
        }
    }
}
