import Testing

@testable import SleepStaging

/// The night rule on hand-written epoch sequences (what the classifier would say), so each case
/// isolates one rule: onset, final awakening, a wake in the middle, a nap, a strap taken off.
@Suite("Main sleep period and naps")
struct SleepPeriodsTests {
    enum Span {
        case sleep(minutes: Double)
        case wake(minutes: Double)
        /// No usable beat at all (strap off or lost); the classifier's label there is `sleep`,
        /// as it may well be from the data around it, to show that it is not trusted.
        case off(minutes: Double)
    }

    /// 2026-11-20T22:00:00Z.
    static let evening = 1_795_212_000.0

    static func epochs(_ spans: [Span], from start: Double = evening) -> [SleepEpoch] {
        var epochs: [SleepEpoch] = []
        for span in spans {
            let (minutes, stage, beats): (Double, SleepEpoch.Stage, Int) = switch span {
            case .sleep(let minutes): (minutes, .sleep, 30)
            case .wake(let minutes): (minutes, .wake, 40)
            case .off(let minutes): (minutes, .sleep, 0)
            }
            for _ in 0..<Int(minutes * 2) {
                let begins = start + Double(epochs.count * SleepEpoch.seconds)
                epochs.append(SleepEpoch(
                    start: begins, stage: stage, sleepProbability: stage == .sleep ? 0.9 : 0.1,
                    wakeProbability: stage == .sleep ? 0.1 : 0.9, validBeats: beats))
            }
        }
        return epochs
    }

    static func minutes(_ value: Double) -> Double { value * 60 }

    @Test("sleep onset is the first epoch of sleep, not the start of the recording")
    func onset() throws {
        let night = SleepPeriods.find(in: Self.epochs([.wake(minutes: 42), .sleep(minutes: 420), .wake(minutes: 25)]))
        let main = try #require(night.main)
        #expect(main.start == Self.evening + Self.minutes(42))
        #expect(main.sleepSeconds == 420 * 60)
        #expect(main.awakeSeconds == 0)
        #expect(main.efficiency == 1)
    }

    /// A night, then up for 35 minutes, a 20-minute doze, and up for good.
    static let dozeAfterGettingUp = SleepPeriods.find(in: epochs([
        .sleep(minutes: 400), .wake(minutes: 35), .sleep(minutes: 20), .wake(minutes: 60),
    ]))

    @Test("final awakening is the end of the last sleep")
    func finalAwakening() throws {
        let main = try #require(Self.dozeAfterGettingUp.main)
        #expect(main.start == Self.evening)
        #expect(main.end == Self.evening + Self.minutes(400))
    }

    @Test("a doze after getting up is a nap, not the night")
    func dozeAfterGettingUp() {
        let night = Self.dozeAfterGettingUp
        #expect(night.naps.map(\.start) == [Self.evening + Self.minutes(435)])
        #expect(night.naps.first?.sleepSeconds == 20 * 60)
    }

    @Test("a wake in the middle shorter than an hour stays in the night as WASO")
    func shortWakeInTheMiddle() throws {
        let short = try #require(SleepPeriods.find(in: Self.epochs([
            .wake(minutes: 10), .sleep(minutes: 180), .wake(minutes: 45), .sleep(minutes: 240), .wake(minutes: 5),
        ])).main)
        #expect(short.start == Self.evening + Self.minutes(10))
        #expect(short.end == Self.evening + Self.minutes(475))
        #expect(short.inBedSeconds == 465 * 60)
        #expect(short.sleepSeconds == 420 * 60)
        #expect(short.awakeSeconds == 45 * 60)
        #expect(short.awakenings == 1)
        #expect(abs(short.efficiency - 420.0 / 465.0) < 1e-12)
    }

    @Test("a wake in the middle of an hour or more splits the night")
    func longWakeInTheMiddle() throws {
        let split = SleepPeriods.find(in: Self.epochs([.sleep(minutes: 180), .wake(minutes: 60), .sleep(minutes: 240)]))
        let main = try #require(split.main)
        #expect(main.start == Self.evening + Self.minutes(240))
        #expect(main.sleepSeconds == 240 * 60)
        #expect(split.naps.map(\.sleepSeconds) == [180 * 60], "the first part is other sleep, reported beside the night")
    }

    /// Three wake runs (30 s, 3 min, 20 min) between four stretches of sleep, one of them 10 minutes.
    static let fragmentedNight = SleepPeriods.find(in: epochs([
        .sleep(minutes: 90), .wake(minutes: 0.5), .sleep(minutes: 10), .wake(minutes: 3), .sleep(minutes: 120),
        .wake(minutes: 20), .sleep(minutes: 60),
    ]))

    @Test("brief awakenings and short sleep inside the night all count")
    func fragmentedNightCounts() throws {
        let main = try #require(Self.fragmentedNight.main)
        #expect(main.sleepSeconds == (90 + 10 + 120 + 60) * 60)
        #expect(main.awakeSeconds == Int((0.5 + 3 + 20) * 60))
    }

    @Test("each wake run inside the night is one awakening")
    func fragmentedNightAwakenings() throws {
        #expect(try #require(Self.fragmentedNight.main).awakenings == 3)
    }

    /// From 13:00: a 40-minute nap at 14:00, a doze at 18:00, the night from 23:00.
    static let afternoonAndNight = SleepPeriods.find(in: epochs([
        .wake(minutes: 60), .sleep(minutes: 40), .wake(minutes: 200), .sleep(minutes: 10), .wake(minutes: 290),
        .sleep(minutes: 450), .wake(minutes: 30),
    ], from: evening - minutes(540)))

    @Test("a 10-minute doze is neither a nap nor the start of the night")
    func dozeIsNoNap() throws {
        let night = Self.afternoonAndNight
        let main = try #require(night.main)
        #expect(main.start == Self.evening + Self.minutes(60))
        #expect(main.sleepSeconds == 450 * 60)
        #expect(night.naps.count == 1)
    }

    @Test("an afternoon nap is reported separately")
    func nap() throws {
        let nap = try #require(Self.afternoonAndNight.naps.first)
        #expect(nap.start == Self.evening - Self.minutes(480))
        #expect(nap.end == Self.evening - Self.minutes(440))
        #expect(nap.sleepSeconds == 40 * 60)
        #expect(nap.awakeSeconds == 0)
    }

    @Test("a strap taken off at 3 am ends the night there, whatever the classifier says about the gap")
    func strapOffAt3() throws {
        // From 23:00: asleep, strap off at 03:00 until the recording ends at 07:00.
        let off = try #require(SleepPeriods.find(in: Self.epochs([
            .wake(minutes: 60), .sleep(minutes: 240), .off(minutes: 240),
        ])).main)
        #expect(off.start == Self.evening + Self.minutes(60))
        #expect(off.end == Self.evening + Self.minutes(300))
        #expect(off.sleepSeconds == 240 * 60)

        // Put back on at 03:30: the night cannot reach over the half hour nobody saw, even though
        // sleep on both sides is less than an hour apart.
        let back = SleepPeriods.find(in: Self.epochs([
            .wake(minutes: 60), .sleep(minutes: 240), .off(minutes: 30), .sleep(minutes: 200), .wake(minutes: 10),
        ]))
        let main = try #require(back.main)
        #expect(main.end == Self.evening + Self.minutes(300))
        #expect(back.naps.map(\.start) == [Self.evening + Self.minutes(330)])
    }

    @Test("a dropout shorter than 4 minutes keeps the classifier's labels: the night goes on")
    func shortDropout() throws {
        let main = try #require(SleepPeriods.find(in: Self.epochs([
            .sleep(minutes: 200), .off(minutes: 3.5), .sleep(minutes: 200),
        ])).main)
        #expect(main.sleepSeconds == 807 * 30)
        #expect(main.end == Self.evening + Self.minutes(403.5))
    }

    @Test("recordings glued together with a jump in time are not one night")
    func jumpInTime() throws {
        let first = Self.epochs([.sleep(minutes: 100)])
        let second = Self.epochs([.sleep(minutes: 150)], from: Self.evening + Self.minutes(130))
        let night = SleepPeriods.find(in: first + second)
        #expect(night.main?.start == Self.evening + Self.minutes(130))
        #expect(night.naps.map(\.sleepSeconds) == [100 * 60])
    }

    @Test("no sleep block of more than 30 minutes: no night (the strap was not worn asleep)")
    func noNight() {
        #expect(SleepPeriods.find(in: Self.epochs([.wake(minutes: 300), .sleep(minutes: 30), .wake(minutes: 60)])).main == nil)
        #expect(SleepPeriods.find(in: Self.epochs([.off(minutes: 480)])).main == nil)
        #expect(SleepPeriods.find(in: []).main == nil)
    }
}
