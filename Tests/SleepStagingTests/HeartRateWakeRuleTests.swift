import Testing

@testable import SleepStaging

/// Each epoch's heart rate and the heart-rate rule of the night (`HeartRateWakeRule`), on
/// hand-written epochs and notifications (synthetic: plumbing and the rule's arithmetic). Its
/// accuracy on real scored nights is scripts/sleep-accuracy.py's (docs/sleep.md, "Accuracy").
@Suite("Heart-rate rule of the night")
struct HeartRateWakeRuleTests {
    typealias Span = SleepPeriodsTests.Span
    static let evening = SleepPeriodsTests.evening
    static let window = (evening - 4 * 3600)..<(evening + 20 * 3600)
    static let noon = evening + 14 * 3600

    /// One notification a second over `minutes` from `start`, each one beat of `bpm` (1/1024 s).
    static func notifications(from start: Double, minutes: Double, bpm: Double) -> [(time: Double, rr1024: [Int])] {
        (0..<Int(minutes * 60)).map { second in (start + Double(second) + 0.5, [Int((60 / bpm * 1024).rounded())]) }
    }

    /// 400 minutes of sleep to the classifier from 22:00, the heart at 60 bpm but for 10 minutes at
    /// 90 from 01:20 (minute 200).
    static let night = SleepPeriodsTests.epochs([.sleep(minutes: 400)])
    static let raised = notifications(from: evening, minutes: 200, bpm: 60)
        + notifications(from: evening + 200 * 60, minutes: 10, bpm: 90)
        + notifications(from: evening + 210 * 60, minutes: 190, bpm: 60)

    static func assemble(_ notifications: [(time: Double, rr1024: [Int])]) -> NightPeriod? {
        NightAssembly.assemble(
            night, wear: [WearSpan(start: evening, end: evening + 400 * 60)], notifications: notifications, window: window,
            noon: noon, now: nil, wearGapSeconds: 1800
        ).main
    }

    @Test("an epoch's heart rate is 60 × its beats / their length, intervals outside 0.3–2 s left out; none: nil")
    func perEpoch() {
        let epochs = SleepPeriodsTests.epochs([.sleep(minutes: 1.5)])
        let heartRate = EpochHeartRate.perEpoch(epochs, notifications: [
            (Self.evening + 1, [1024, 1024]), (Self.evening + 2, [205]),  // 1 s twice (60 bpm); 0.2 s, not a beat
            (Self.evening + 31, [512]), (Self.evening + 45, [512, 3000]),  // 0.5 s twice (120 bpm); 2.9 s, not a beat
        ])
        #expect(heartRate == [60, 120, nil])
    }

    @Test("ten minutes of raised heart rate inside the night are wake, the sleep around them stays sleep")
    func raisedHeartRateIsWake() throws {
        let main = try #require(Self.assemble(Self.raised))
        #expect(main.sleepSeconds == 390 * 60 && main.awakeSeconds == 10 * 60 && main.awakenings == 1, "\(main)")
        #expect(main.start == Self.evening && main.end == Self.evening + 400 * 60, "the night's span stays the classifier's")
    }

    @Test("without RR intervals the classifier's labels stand")
    func noBeatsNoRule() throws {
        let main = try #require(Self.assemble([]))
        #expect(main.sleepSeconds == 400 * 60 && main.awakeSeconds == 0)
    }

    @Test("a heart rate drifting down by 10 bpm over the night, without a rise, leaves every sleep epoch asleep")
    func driftingHeartRate() throws {
        // The quantile rule before 2026-11-26 turned the night's first, highest fifth to wake.
        let drifting = (0..<400).flatMap { minute in
            Self.notifications(from: Self.evening + Double(minute) * 60, minutes: 1, bpm: 70 - 10 * Double(minute) / 400)
        }
        let main = try #require(Self.assemble(drifting))
        #expect(main.sleepSeconds == 400 * 60, "\(main)")
    }

    @Test("ten minutes 2 bpm above the sleep around them stay sleep")
    func smallRiseIsSleep() throws {
        let risen = Self.notifications(from: Self.evening, minutes: 200, bpm: 60)
            + Self.notifications(from: Self.evening + 200 * 60, minutes: 10, bpm: 62)
            + Self.notifications(from: Self.evening + 210 * 60, minutes: 190, bpm: 60)
        let main = try #require(Self.assemble(risen))
        #expect(main.sleepSeconds == 400 * 60, "\(main)")
    }

    @Test("a steady heart rate leaves every sleep epoch asleep")
    func steadyHeartRate() throws {
        let main = try #require(Self.assemble(Self.notifications(from: Self.evening, minutes: 400, bpm: 60)))
        #expect(main.sleepSeconds == 400 * 60)
    }
}
