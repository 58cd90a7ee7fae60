/// Webster's rescoring rules (Webster, Kripke, Messin, Mullaney & Wyborney, "An activity-based
/// sleep monitor system for ambulatory use", Sleep 5(4):389–399, 1982), published for wrist
/// actigraphy, whose sleep/wake scoring overcalls sleep in quiet wake as a heart-rate classifier
/// does. In minutes (×2 epochs of 30 s):
///
/// a. after at least 4 minutes of wake, the next 1 minute of sleep is wake;
/// b. after at least 10 minutes of wake, the next 3 minutes of sleep are wake;
/// c. after at least 15 minutes of wake, the next 4 minutes of sleep are wake;
/// d. 6 minutes or less of sleep with at least 10 minutes of wake on both sides is wake;
/// e. 10 minutes or less of sleep with at least 20 minutes of wake on both sides is wake.
///
/// Each rule reads the classifier's labels (a–c: the strongest that applies to a run of wake;
/// d–e: on the labels after a–c). Missing data is neither sleep nor wake: it ends a run and is
/// never rescored. Measured on real scored nights in docs/sleep.md.
enum WebsterRescoring {
    static func rescore(_ states: [SleepPeriods.State]) -> [SleepPeriods.State] {
        var out = states
        let perMinute = 60 / SleepEpoch.seconds
        // a–c: the sleep that follows a run of wake.
        var index = 0
        while index < states.count {
            guard states[index] == .wake else {
                index += 1
                continue
            }
            let end = runEnd(states, from: index, .wake)
            let wakeMinutes = (end - index) / perMinute
            let rescored = wakeMinutes >= 15 ? 4 : wakeMinutes >= 10 ? 3 : wakeMinutes >= 4 ? 1 : 0
            var next = end
            while next < min(states.count, end + rescored * perMinute), states[next] == .sleep {
                out[next] = .wake
                next += 1
            }
            index = end
        }
        // d–e: short sleep between long wake.
        let afterAC = out
        index = 0
        while index < afterAC.count {
            guard afterAC[index] == .sleep else {
                index += 1
                continue
            }
            let end = runEnd(afterAC, from: index, .sleep)
            let before = wakeBefore(afterAC, index)
            let after = end < afterAC.count && afterAC[end] == .wake ? runEnd(afterAC, from: end, .wake) - end : 0
            let sleep = end - index
            if (sleep <= 6 * perMinute && min(before, after) >= 10 * perMinute) || (sleep <= 10 * perMinute && min(before, after) >= 20 * perMinute) {
                for rescored in index..<end { out[rescored] = .wake }
            }
            index = end
        }
        return out
    }

    private static func runEnd(_ states: [SleepPeriods.State], from start: Int, _ state: SleepPeriods.State) -> Int {
        var end = start
        while end < states.count && states[end] == state { end += 1 }
        return end
    }

    private static func wakeBefore(_ states: [SleepPeriods.State], _ index: Int) -> Int {
        var start = index
        while start > 0 && states[start - 1] == .wake { start -= 1 }
        return index - start
    }
}
