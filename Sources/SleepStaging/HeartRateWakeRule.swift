/// Wake from the heart-rate level inside the night: a sleep epoch whose heart rate (the median over
/// a 5-minute window centred on it) is above the `quantile` of the heart rate of the night's sleep
/// epochs is wake.
///
/// Published basis: heart rate rises on waking and is lowest in sleep, the signal of the
/// heart-rate sleep detector of Perez-Pozuelo, Posa, Spathis, Westgate, Wareham, Mascolo, Brage &
/// Palotti, "Detecting sleep outside the clinic using wearable heart rate devices", Sci Rep
/// 12:7956, 2022 (doi:10.1038/s41598-022-11792-7; the HR rule of their open-source HypnosPy):
/// heart rate above a quantile of the person's own night is not sleep, judged on a 5-minute
/// rolling median. They use it to find the sleep window; here it runs beside the classifier, on
/// the epochs it called sleep inside the night (Walch et al., Sleep 42:zsz180, 2019, likewise
/// find heart rate a useful feature beside an activity signal). The night itself (its blocks,
/// onset and final awakening) is the classifier's: the rule only relabels epochs within it.
///
/// The quantile is ours, **tuned**: chosen on the 6 tuning nights of slpdb (docs/sleep.md,
/// "Accuracy"), the best of 0.74–0.90 there; held-out figures beside it. The 5-minute window is the
/// publication's (HypnosPy's `rolling_win_in_minutes`), not tuned.
public struct HeartRateWakeRule: Sendable, Equatable {
    /// Heart rate above this quantile of the night's sleep-epoch heart rates is wake.
    public var quantile: Double
    /// Epochs on each side of the centre of the median window (5 → 5.5 minutes in all).
    public var halfWindowEpochs: Int

    public init(quantile: Double = 0.78, halfWindowEpochs: Int = 5) {
        self.quantile = quantile
        self.halfWindowEpochs = halfWindowEpochs
    }

    /// `states` with the rule applied to the sleep epochs in `night`; `heartRate` one per epoch
    /// (`EpochHeartRate`), nil where there was no beat: such an epoch is judged by the heart rate of
    /// the others in its window, and keeps its label when none has one. No heart rate at all (a
    /// strap that sent no RR intervals): unchanged.
    func rescore(_ states: [SleepPeriods.State], night: Range<Int>, heartRate: [Double?], epochs: [SleepEpoch]) -> [SleepPeriods.State] {
        guard heartRate.count == states.count else { return states }
        let sleeping = night.compactMap { states[$0] == .sleep ? heartRate[$0] : nil }.sorted()
        guard !sleeping.isEmpty else { return states }
        let threshold = sleeping[min(sleeping.count - 1, Int(quantile * Double(sleeping.count)))]
        let reach = Double(halfWindowEpochs * SleepEpoch.seconds)
        var out = states
        for index in night where states[index] == .sleep {
            let around = max(0, index - halfWindowEpochs)...min(states.count - 1, index + halfWindowEpochs)
            // Only epochs really within the window: none across a jump in time.
            let window = around.compactMap { other in abs(epochs[other].start - epochs[index].start) <= reach ? heartRate[other] : nil }
            if !window.isEmpty && NumpyReductions.median(sorted: window.sorted()) > threshold { out[index] = .wake }
        }
        return out
    }
}
