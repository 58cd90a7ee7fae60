@testable import Store

/// A journal window's rows of the three original kinds by name, for the tests that build and
/// read windows by hand.
extension JournalEntry {
    init(seq: Int64, fixes: [StoredFix] = [], heartRates: [StoredHeartRate] = [], steps: [StoredStepRecord] = []) {
        self.init(seq: seq, rows: SampleBatch(fixes: fixes, heartRates: heartRates, steps: steps))
    }

    var fixes: [StoredFix] {
        get { rows[FixKind.self] }
        set { rows[FixKind.self] = newValue }
    }

    var heartRates: [StoredHeartRate] {
        get { rows[HeartRateKind.self] }
        set { rows[HeartRateKind.self] = newValue }
    }

    var steps: [StoredStepRecord] {
        get { rows[StepRecordKind.self] }
        set { rows[StepRecordKind.self] = newValue }
    }
}
