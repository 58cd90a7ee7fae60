/// Wake from a raised heart rate inside the night: a sleep epoch whose heart rate (the median over
/// a 5-minute window centred on it) is at least `raisedBpm` above the sleeping heart rate around it
/// (the median heart rate of the night's sleep epochs within `baselineHalfSpanSeconds` either side)
/// is wake.
///
/// Published basis: heart rate rises on waking and is lowest in sleep, the signal of the
/// heart-rate sleep detector of Perez-Pozuelo, Posa, Spathis, Westgate, Wareham, Mascolo, Brage &
/// Palotti, "Detecting sleep outside the clinic using wearable heart rate devices", Sci Rep
/// 12:7956, 2022 (doi:10.1038/s41598-022-11792-7; the HR rule of their open-source HypnosPy),
/// judged on a 5-minute rolling median; cortical arousal from sleep comes with a rise in heart
/// rate that grows with the arousal's intensity, 0.7–2.4 bpm per step of a 0–9 intensity scale
/// depending on the person (Azarbarzin, Ostrowski, Hanly & Younes, "Relationship between arousal
/// intensity and heart rate response to arousal", Sleep 37:645, 2014, doi:10.5665/sleep.3560),
/// and begins before the EEG arousal (Bonnet & Arand, "Heart rate variability: sleep stage, time
/// of night, and arousal influences", Electroencephalogr Clin Neurophysiol 102:390, 1997). The
/// baseline is local because the sleeping heart rate drifts over a night (slp37's falls by 6 bpm
/// from its first quarter to its last): against the whole night's level, early sleep looked
/// raised. The night itself (its blocks, onset and final awakening) is the classifier's: the rule
/// only relabels epochs within it.
///
/// Until 2026-11-26 the rule turned epochs above the 0.78 quantile of the night's sleeping heart
/// rate to wake: about a fifth of every night's sleep whatever the night, an hour too little on
/// nights slept well (docs/sleep.md, "Heart-rate rule variants").
///
/// `raisedBpm` (3) and `baselineHalfSpanSeconds` (30 min) are ours, **tuned** on the 6 tuning
/// nights of slpdb: the span for the lowest TST error there (of 10–120 min, with the quantile
/// rule), then the 3 bpm for the highest epoch κ against the lab's scoring; the kind of rule was
/// picked after the held-out nights were seen (docs/sleep.md, "Heart-rate rule variants"). The
/// 5-minute window is the publication's (HypnosPy's `rolling_win_in_minutes`), not tuned.
public struct HeartRateWakeRule: Sendable, Equatable {
    /// An epoch's heart rate at least this far above the sleeping heart rate around it is wake.
    public var raisedBpm: Double
    /// How far either side of an epoch the sleep epochs of its baseline lie.
    public var baselineHalfSpanSeconds: Double
    /// Epochs on each side of the centre of the median window (5 → 5.5 minutes in all).
    public var halfWindowEpochs: Int

    public init(raisedBpm: Double = 3, baselineHalfSpanSeconds: Double = 1800, halfWindowEpochs: Int = 5) {
        self.raisedBpm = raisedBpm
        self.baselineHalfSpanSeconds = baselineHalfSpanSeconds
        self.halfWindowEpochs = halfWindowEpochs
    }

    /// `states` with the rule applied to the sleep epochs in `night`; `heartRate` one per epoch
    /// (`EpochHeartRate`), nil where there was no beat: such an epoch is judged by the heart rate of
    /// the others in its window, and keeps its label when none has one (or no sleep epoch around it
    /// has one). No heart rate at all (a strap that sent no RR intervals): unchanged.
    func rescore(_ states: [SleepPeriods.State], night: Range<Int>, heartRate: [Double?], epochs: [SleepEpoch]) -> [SleepPeriods.State] {
        guard heartRate.count == states.count else { return states }
        // The night's sleep epochs with a heart rate, in time order: the baselines are drawn from them.
        let sleeping = night.compactMap { index in
            states[index] == .sleep ? heartRate[index].map { (start: epochs[index].start, bpm: $0) } : nil
        }
        guard !sleeping.isEmpty else { return states }
        let reach = Double(halfWindowEpochs * SleepEpoch.seconds)
        var out = states
        var first = 0
        var last = 0
        for index in night where states[index] == .sleep {
            let start = epochs[index].start
            while first < sleeping.count && sleeping[first].start < start - baselineHalfSpanSeconds { first += 1 }
            last = max(last, first)
            while last < sleeping.count && sleeping[last].start <= start + baselineHalfSpanSeconds { last += 1 }
            guard last > first else { continue }
            let baseline = NumpyReductions.median(sorted: sleeping[first..<last].map(\.bpm).sorted())
            let around = max(0, index - halfWindowEpochs)...min(states.count - 1, index + halfWindowEpochs)
            // Only epochs really within the window: none across a jump in time.
            let window = around.compactMap { other in abs(epochs[other].start - start) <= reach ? heartRate[other] : nil }
            if !window.isEmpty && NumpyReductions.median(sorted: window.sorted()) >= baseline + raisedBpm { out[index] = .wake }
        }
        return out
    }
}
