/// How a night is put together from the classified epochs of a window's wear (docs/sleep.md):
///
/// 0. Webster's rescoring rules on the classifier's labels (`WebsterRescoring`).
/// 1. GGIR's HDCZA blocks (`SleepPeriods`): runs of sleep longer than 30 minutes, joined across
///    less than 60 minutes of wake. Without one that starts before the window's noon there is no
///    night.
/// 2. Sleep kept, not dropped: the night runs from the first block to the last that starts before
///    noon, whatever lies between (wake, or time the strap did not see: `unobservedSeconds`), as a
///    sleep lab's total sleep time counts all sleep from lights out to lights on. Sleep after noon,
///    and runs too short for a block outside the night, are naps when at least 15 minutes.
/// 3. Heart-rate level (`HeartRateWakeRule`): within the night, a sleep epoch whose heart rate is
///    raised above the sleeping heart rate around it is wake. The night's span stays the classifier's.
/// 4. Time in bed from wear, not from sleep (`NightPeriod.inBedSeconds`).
/// 5. In progress: computed while the strap is still worn (its last wear within the 30-minute
///    wear gap of `now`) and within 60 minutes of the night's last sleep, more sleep could still
///    join the night.
public enum NightAssembly {
    /// - Parameters:
    ///   - epochs: the classified epochs of every recording of the window, in time order (a jump
    ///     in time between recordings is missing data).
    ///   - wear: when the strap was worn.
    ///   - notifications: the strap's notifications in time order, time (Unix s) and RR intervals
    ///     (1/1024 s), for each epoch's heart rate (`EpochHeartRate`); none: no heart-rate rule.
    ///   - window: the night's window (Unix s); `noon`: the latest start of a night.
    ///   - now: when computed (Unix s), nil for a finished window.
    ///   - wearGapSeconds: a strap silent this long was taken off (not still worn).
    ///   - rescore: apply Webster's rules (false only to test the other rules alone).
    ///   - heartRateRule: the heart-rate rule, nil for none.
    ///   - epochHeartRate: each epoch's heart rate when the caller computed it
    ///     (`EpochHeartRate`), instead of from `notifications`.
    public static func assemble(
        _ epochs: [SleepEpoch], wear: [WearSpan], notifications: [(time: Double, rr1024: [Int])] = [], window: Range<Double>,
        noon: Double, now: Double?, wearGapSeconds: Double, rule: SleepPeriodRule = SleepPeriodRule(), rescore: Bool = true,
        heartRateRule: HeartRateWakeRule? = HeartRateWakeRule(), epochHeartRate: [Double?]? = nil
    ) -> NightAndNaps {
        let classified = SleepPeriods.states(of: epochs, rule: rule)
        let states = rescore ? WebsterRescoring.rescore(classified) : classified
        let runs = SleepPeriods.sleepRuns(states, epochs)
        let blocks = SleepPeriods.mergedBlocks(runs, states, epochs, rule: rule)
        // Every block that starts before noon is the night's: sleep is kept, not dropped.
        let night = blocks.filter { epochs[$0.lowerBound].start < noon }
        guard let first = night.first, let last = night.last else {
            return NightAndNaps(main: nil, naps: naps(runs, outside: nil, epochs, states, rule))
        }
        let span = first.lowerBound..<last.upperBound
        var nightStates = states
        if let heartRateRule, epochHeartRate != nil || !notifications.isEmpty {
            let heartRate = epochHeartRate ?? EpochHeartRate.perEpoch(epochs, notifications: notifications)
            nightStates = heartRateRule.rescore(states, night: span, heartRate: heartRate, epochs: epochs)
        }
        var main = period(span, epochs, nightStates, wear: wear, window: window)
        if let now, let lastWear = wear.last, now - lastWear.end <= wearGapSeconds,
           lastWear.end - main.end < Double(rule.maximumFilledWakeSeconds) {
            main.inProgress = true
        }
        return NightAndNaps(main: main, naps: naps(runs, outside: span, epochs, states, rule))
    }

    static func naps(
        _ runs: [Range<Int>], outside night: Range<Int>?, _ epochs: [SleepEpoch], _ states: [SleepPeriods.State], _ rule: SleepPeriodRule
    ) -> [SleepPeriod] {
        runs.filter { run in run.count * SleepEpoch.seconds >= rule.minimumNapSeconds && !(night?.overlaps(run) ?? false) }
            .map { SleepPeriods.period($0, epochs, states) }
    }

    static func period(
        _ span: Range<Int>, _ epochs: [SleepEpoch], _ states: [SleepPeriods.State], wear: [WearSpan], window: Range<Double>
    ) -> NightPeriod {
        let seconds = SleepEpoch.seconds
        let sleep = span.filter { states[$0] == .sleep }.count * seconds
        let awake = span.filter { states[$0] == .wake }.count * seconds
        let awakenings = span.filter { states[$0] == .wake && ($0 == span.lowerBound || states[$0 - 1] != .wake) }.count
        let start = epochs[span.lowerBound].start
        let end = epochs[span.upperBound - 1].end
        let unobserved = max(0, Int((end - start).rounded()) - sleep - awake)
        // In bed: from the start of the wear that holds sleep onset to the end of the wear that
        // holds the final awakening, within the window, counting only worn time.
        let from = max(window.lowerBound, wear.last { $0.start <= start }?.start ?? start)
        let to = min(window.upperBound, wear.first { $0.end >= end }?.end ?? end)
        let worn = wear.reduce(0.0) { total, span in total + max(0, min(span.end, to) - max(span.start, from)) }
        let inBed = max(Int(worn.rounded()), sleep + awake)
        return NightPeriod(
            start: start, end: end, sleepSeconds: sleep, awakeSeconds: awake, unobservedSeconds: unobserved,
            awakenings: awakenings, inBedSeconds: inBed, efficiency: inBed > 0 ? Double(sleep) / Double(inBed) : 0,
            inProgress: false)
    }
}
