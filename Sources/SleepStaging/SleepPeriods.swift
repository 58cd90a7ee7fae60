/// How the main sleep period is found in classified epochs: the last steps of GGIR's HDCZA
/// algorithm (van Hees et al. 2018, Sci Rep 8:12975, doi:10.1038/s41598-018-31266-z; GGIR
/// vignette "Sleep Fundamentals: Guiding sleep detection"), which GGIR applies unchanged to other
/// per-epoch rest signals (its HorAngle and NotWorn guiders): keep blocks of sleep longer than 30
/// minutes, fill the time between two blocks when it is shorter than 60 minutes, and the longest
/// resulting block is the sleep period. Here the per-epoch signal is the classifier's wake/sleep.
///
/// Naps: other runs of sleep of at least 15 minutes (GGIR's shortest nap, `possible_nap_dur`).
///
/// Gaps (our rule, no published one fits a chest strap): a run of epochs without a single usable
/// beat lasting `dataGapSeconds` or more is missing data. It is neither sleep nor wake, a block
/// cannot contain it and a filled stretch cannot cross it, so a strap taken off at 3 am ends the
/// period at the last sleep before. 4 minutes because a shorter hole leaves every epoch in it more
/// than half of its 510-s feature window, sleepecg's own limit (`max_nans` 0.5) for computing the
/// spectral features; such epochs keep the classifier's label.
public struct SleepPeriodRule: Sendable, Equatable {
    /// HDCZA step 7 (GGIR `spt_min_block_dur`): sleep blocks must be longer than this.
    public var minimumBlockSeconds: Int
    /// HDCZA step 8 (GGIR `spt_max_gap_dur`): wake between two blocks shorter than this is filled.
    public var maximumFilledWakeSeconds: Int
    /// GGIR `possible_nap_dur` lower bound: shorter sleep outside the main period is not a nap.
    public var minimumNapSeconds: Int
    /// Epochs without a usable beat for at least this long are missing data.
    public var dataGapSeconds: Int

    public init(
        minimumBlockSeconds: Int = 30 * 60, maximumFilledWakeSeconds: Int = 60 * 60, minimumNapSeconds: Int = 15 * 60,
        dataGapSeconds: Int = 4 * 60
    ) {
        self.minimumBlockSeconds = minimumBlockSeconds
        self.maximumFilledWakeSeconds = maximumFilledWakeSeconds
        self.minimumNapSeconds = minimumNapSeconds
        self.dataGapSeconds = dataGapSeconds
    }
}

/// A sleep period: the main one of a night (GGIR's sleep period time window) or a nap.
public struct SleepPeriod: Sendable, Equatable, Codable {
    /// Sleep onset: the start of its first sleep epoch (Unix seconds).
    public var start: Double
    /// Final awakening: the end of its last sleep epoch (Unix seconds).
    public var end: Double
    /// `end − start`: the whole period. A strap cannot see the bed, so this is the sleep period,
    /// not the time in bed of a sleep lab (which starts at lights out).
    public var inBedSeconds: Int
    /// Time asleep within the period.
    public var sleepSeconds: Int
    /// Time awake within the period: wake after sleep onset (WASO).
    public var awakeSeconds: Int
    /// Runs of wake epochs within the period.
    public var awakenings: Int
    /// `sleepSeconds / inBedSeconds`.
    public var efficiency: Double
    /// The epochs it spans, as indices into the classified epochs.
    public var epochs: Range<Int>
}

public struct NightSleep: Sendable, Equatable {
    /// The main sleep period, nil when no block of sleep is long enough (strap not worn overnight).
    public var main: SleepPeriod?
    /// Other sleep of at least the nap minimum, outside the main period, in time order.
    public var naps: [SleepPeriod]
}

public enum SleepPeriods {
    enum State: Equatable {
        case sleep, wake, missing
    }

    /// Finds the main sleep period and the naps in a recording's epochs (time order, 30 s each;
    /// a jump in their start times counts as missing data).
    public static func find(in epochs: [SleepEpoch], rule: SleepPeriodRule = SleepPeriodRule()) -> NightSleep {
        let states = states(of: epochs, rule: rule)
        let seconds = SleepEpoch.seconds
        let runs = sleepRuns(states, epochs)
        let merged = mergedBlocks(runs, states, epochs, rule: rule)
        // The longest; of equally long ones, the middle one (as GGIR picks).
        let longest = merged.map(\.count).max() ?? 0
        let candidates = merged.filter { $0.count == longest }
        let main = candidates.isEmpty ? nil : candidates[(candidates.count + 1) / 2 - 1]
        let naps = runs.filter { run in
            run.count * seconds >= rule.minimumNapSeconds && !(main?.overlaps(run) ?? false)
        }
        return NightSleep(
            main: main.map { period($0, epochs, states) }, naps: naps.map { period($0, epochs, states) })
    }

    /// HDCZA steps 7 and 8: the runs of sleep longer than the block minimum, joined where less
    /// than the filled maximum of wake (no missing data, no jump in time) lies between two.
    static func mergedBlocks(_ runs: [Range<Int>], _ states: [State], _ epochs: [SleepEpoch], rule: SleepPeriodRule) -> [Range<Int>] {
        let seconds = SleepEpoch.seconds
        var merged: [Range<Int>] = []
        for block in runs where block.count * seconds > rule.minimumBlockSeconds {
            if let last = merged.last, (block.lowerBound - last.upperBound) * seconds < rule.maximumFilledWakeSeconds,
               (last.upperBound..<block.lowerBound).allSatisfy({ states[$0] != .missing }),
               contiguous(epochs, last.upperBound - 1, block.lowerBound) {
                merged[merged.count - 1] = last.lowerBound..<block.upperBound
            } else {
                merged.append(block)
            }
        }
        return merged
    }

    /// Each epoch's state: missing inside a long enough run without usable beats (or across a
    /// jump in time), else the classifier's label (UNDEFINED counts as wake: it is not sleep).
    static func states(of epochs: [SleepEpoch], rule: SleepPeriodRule) -> [State] {
        var states = epochs.map { $0.stage == .sleep ? State.sleep : State.wake }
        let gapEpochs = max(1, (rule.dataGapSeconds + SleepEpoch.seconds - 1) / SleepEpoch.seconds)
        var index = 0
        while index < epochs.count {
            guard epochs[index].validBeats == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < epochs.count && epochs[end].validBeats == 0 && (end == index || contiguous(epochs, end - 1, end)) {
                end += 1
            }
            if end - index >= gapEpochs {
                for missing in index..<end { states[missing] = .missing }
            }
            index = end
        }
        return states
    }

    /// Maximal runs of sleep that do not cross a jump in time.
    static func sleepRuns(_ states: [State], _ epochs: [SleepEpoch]) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start: Int?
        for index in 0...states.count {
            let continues = index < states.count && states[index] == .sleep
                && (start == nil || contiguous(epochs, index - 1, index))
            if continues {
                if start == nil { start = index }
            } else {
                if let open = start { runs.append(open..<index) }
                start = index < states.count && states[index] == .sleep ? index : nil
            }
        }
        return runs
    }

    /// Whether epochs `a` and `b` (> a) follow each other without a jump in time.
    static func contiguous(_ epochs: [SleepEpoch], _ a: Int, _ b: Int) -> Bool {
        abs(epochs[b].start - epochs[a].start - Double((b - a) * SleepEpoch.seconds)) < 1
    }

    static func period(_ range: Range<Int>, _ epochs: [SleepEpoch], _ states: [State]) -> SleepPeriod {
        let seconds = SleepEpoch.seconds
        let sleep = range.filter { states[$0] == .sleep }.count * seconds
        let awake = range.filter { states[$0] == .wake }.count * seconds
        let awakenings = range.filter { states[$0] == .wake && ($0 == range.lowerBound || states[$0 - 1] != .wake) }.count
        let start = epochs[range.lowerBound].start
        let end = epochs[range.upperBound - 1].end
        let inBed = range.count * seconds
        return SleepPeriod(
            start: start, end: end, inBedSeconds: inBed, sleepSeconds: sleep, awakeSeconds: awake,
            awakenings: awakenings, efficiency: inBed > 0 ? Double(sleep) / Double(inBed) : 0, epochs: range)
    }
}
