import Testing

@testable import SleepStaging

/// The night assembly on hand-written epoch sequences (synthetic: what the classifier would say),
/// one rule a case: sleep across a strap taken off, time in bed from wear, the noon limit, a night
/// in progress. Accuracy on real scored nights is scripts/sleep-accuracy.py's (docs/sleep.md).
@Suite("Night assembly")
struct NightAssemblyTests {
    typealias Span = SleepPeriodsTests.Span
    static let evening = SleepPeriodsTests.evening  // 22:00Z
    static func minutes(_ value: Double) -> Double { value * 60 }
    /// The window 18:00Z the evening before to 18:00Z, noon at 12:00Z.
    static let window = (evening - minutes(240))..<(evening + minutes(1200))
    static let noon = evening + minutes(840)

    /// Worn wherever an epoch had beats.
    static func wear(_ epochs: [SleepEpoch]) -> [WearSpan] {
        let notifications = epochs.map { ($0.start, $0.validBeats > 0) } + epochs.map { ($0.end - 0.001, $0.validBeats > 0) }
        return WearSpan.spans(notifications.sorted { $0.0 < $1.0 })
    }

    static func assemble(_ epochs: [SleepEpoch], wear: [WearSpan]? = nil, now: Double? = nil) -> NightAndNaps {
        let sorted = epochs.sorted { $0.start < $1.start }
        // Webster's rescoring off: each case isolates one assembly rule (it has its own test).
        return NightAssembly.assemble(
            sorted, wear: wear ?? Self.wear(sorted), window: window, noon: noon, now: now, wearGapSeconds: 1800, rescore: false)
    }

    /// 22:00 wake 60, sleep 240 (to 03:00), off 60, sleep 180 (to 07:00), wake 20.
    static let strapOffAndOn = SleepPeriodsTests.epochs([.wake(minutes: 60), .sleep(minutes: 240)])
        + SleepPeriodsTests.epochs([.sleep(minutes: 180), .wake(minutes: 20)], from: evening + minutes(360))

    @Test("a strap taken off at 03:00 and put back on at 04:00: the sleep on both sides is one night")
    func strapOffAndOn() throws {
        let night = try #require(Self.assemble(Self.strapOffAndOn).main)
        #expect(night.start == Self.evening + Self.minutes(60))
        #expect(night.end == Self.evening + Self.minutes(540))
        #expect(night.sleepSeconds == 420 * 60, "every sleep epoch of both wear spans")
        #expect(!night.inProgress)
    }

    @Test("a strap taken off at 03:00 and put back on at 04:00: the hour counts neither as sleep nor in bed")
    func strapOffHourUnobserved() throws {
        let night = try #require(Self.assemble(Self.strapOffAndOn).main)
        #expect(night.unobservedSeconds == 60 * 60)
        #expect(abs(Double(night.inBedSeconds) - Self.minutes(60 + 240 + 200)) < 2, "worn time from putting it on to taking it off, less the hour off: \(night.inBedSeconds)")
    }

    @Test("efficiency from wear: the strap put on an hour before sleep onset counts that hour in bed")
    func efficiencyFromWear() throws {
        let epochs = SleepPeriodsTests.epochs([.wake(minutes: 60), .sleep(minutes: 360), .wake(minutes: 30), .sleep(minutes: 60), .wake(minutes: 30)])
        let night = try #require(Self.assemble(epochs).main)
        #expect(night.sleepSeconds == 420 * 60 && night.awakeSeconds == 30 * 60)
        #expect(abs(Double(night.inBedSeconds) - Self.minutes(540)) < 2)
        #expect(abs(night.efficiency - 420.0 / 540) < 0.001)
    }

    /// 22:00 sleep 300 (to 03:00), wake 70, sleep 40; then 14:00 sleep 60.
    static let separateSleep = assemble(
        SleepPeriodsTests.epochs([.sleep(minutes: 300), .wake(minutes: 70), .sleep(minutes: 40)])
            + SleepPeriodsTests.epochs([.sleep(minutes: 60), .wake(minutes: 5)], from: evening + minutes(960)))

    @Test("sleep more than an hour of wake away from the rest is still the night's (none of the classifier's sleep before noon is dropped)")
    func separateSleep() throws {
        let main = try #require(Self.separateSleep.main)
        #expect(main.sleepSeconds == 340 * 60 && main.awakeSeconds == 70 * 60 && main.awakenings == 1)
    }

    @Test("sleep after noon is a nap")
    func sleepAfterNoon() {
        #expect(Self.separateSleep.naps.map(\.sleepSeconds) == [60 * 60])
    }

    @Test("an afternoon nap longer than the night's sleep is still not the night")
    func noonLimit() throws {
        let night = SleepPeriodsTests.epochs([.sleep(minutes: 60), .wake(minutes: 5)])
        let afternoon = SleepPeriodsTests.epochs([.sleep(minutes: 120), .wake(minutes: 5)], from: Self.evening + Self.minutes(900))
        let assembled = Self.assemble(night + afternoon)
        #expect(assembled.main?.sleepSeconds == 60 * 60)
        #expect(assembled.naps.map(\.sleepSeconds) == [120 * 60])
    }

    static let stillAsleep = SleepPeriodsTests.epochs([.wake(minutes: 30), .sleep(minutes: 300)])

    @Test("a night still going on is in progress while the strap is worn")
    func inProgress() throws {
        let last = try #require(Self.stillAsleep.last).end
        #expect(Self.assemble(Self.stillAsleep, now: last + 60).main?.inProgress == true)
    }

    @Test("a night whose strap was taken off for longer than the wear gap is over")
    func overOnceTakenOff() throws {
        let epochs = Self.stillAsleep
        let last = try #require(epochs.last).end
        #expect(Self.assemble(epochs, now: last + 3600).main?.inProgress == false)
        #expect(Self.assemble(epochs, now: nil).main?.inProgress == false)
        // Awake for more than an hour with the strap on: the night is over.
        let up = SleepPeriodsTests.epochs([.sleep(minutes: 300), .wake(minutes: 70)])
        #expect(Self.assemble(up, now: try #require(up.last).end + 60).main?.inProgress == false)
    }

    @Test("no beats: no night, no naps")
    func empty() {
        let assembled = Self.assemble([])
        #expect(assembled.main == nil && assembled.naps.isEmpty)
    }

    @Test("wear spans: contact lost for longer than the data gap splits them")
    func wearSpans() {
        let spans = WearSpan.spans([(0, true), (100, true), (150, false), (300, true), (1000, true), (1100, false)])
        #expect(spans == [WearSpan(start: 0, end: 300), WearSpan(start: 1000, end: 1000)])
    }

    @Test("wear spans: notifications without contact are not wear")
    func contactlessIsNoWear() {
        #expect(WearSpan.spans([(0, false), (30, false)]).isEmpty)
        #expect(WearSpan.spans([(0, true), (30, false), (60, false)]) == [WearSpan(start: 0, end: 0)])
    }

    typealias S = SleepPeriods.State
    static func states(_ runs: [(S, Int)]) -> [S] { runs.flatMap { Array(repeating: $0.0, count: $0.1) } }

    @Test("Webster's rules: sleep after long wake starts later")
    func websterLateOnset() {
        func states(_ runs: [(S, Int)]) -> [S] { Self.states(runs) }
        // a: 4 min wake → 1 min (2 epochs); b: 10 min → 3 min; c: 15 min → 4 min.
        #expect(WebsterRescoring.rescore(states([(.wake, 8), (.sleep, 20)])) == states([(.wake, 10), (.sleep, 18)]))
        #expect(WebsterRescoring.rescore(states([(.wake, 20), (.sleep, 20)])) == states([(.wake, 26), (.sleep, 14)]))
        #expect(WebsterRescoring.rescore(states([(.wake, 30), (.sleep, 20)])) == states([(.wake, 38), (.sleep, 12)]))
        #expect(WebsterRescoring.rescore(states([(.wake, 7), (.sleep, 20)])) == states([(.wake, 7), (.sleep, 20)]))
    }

    @Test("Webster's rules: a short sleep between long wake is wake")
    func websterShortSleep() {
        func states(_ runs: [(S, Int)]) -> [S] { Self.states(runs) }
        // d: 6 min of sleep between 10 min of wake (after a–c: 16 - 8 min left, surrounded by ≥ 10 min).
        #expect(WebsterRescoring.rescore(states([(.wake, 20), (.sleep, 12), (.wake, 20), (.sleep, 40)])).prefix(52) == states([(.wake, 52)])[...])
        // e: 10 min of sleep between 20 min of wake.
        #expect(WebsterRescoring.rescore(states([(.wake, 40), (.sleep, 28), (.wake, 40)])) == states([(.wake, 108)]))
    }

    @Test("Webster's rules: missing data is never rescored")
    func websterMissing() {
        func states(_ runs: [(S, Int)]) -> [S] { Self.states(runs) }
        // Missing data ends a run and stays missing.
        #expect(WebsterRescoring.rescore(states([(.wake, 30), (.missing, 10), (.sleep, 20)])) == states([(.wake, 30), (.missing, 10), (.sleep, 20)]))
    }
}
