/// The 36 features per 30-s epoch that sleepecg's `ws-gru-mesa` classifier reads, computed as
/// `sleepecg.extract_features` does with that classifier's parameters (its `info.yml`: features
/// `hrv-time`, `hrv-frequency`, `recording_start_time`, `age`, `gender`; lookback 240 s,
/// lookforward 270 s; RR limits 0.3–2 s; `max_nans` 0.5; 4 Hz resampling).
///
/// Preprocessing is sleepecg's `preprocess_rri`: intervals below 0.3 s or above 2 s become NaN
/// and stay in place (they break successive differences and the interpolation around them).
/// Epochs start at the recording start; there are `int(last beat time // 30)` of them.
public struct SleepFeatures: Sendable {
    /// Feature names in column order (sleepecg's feature IDs).
    public static let names = TimeDomainFeatures.names + FrequencyDomainFeatures.names
        + ["recording_start_time", "age", "gender"]
    /// Where the subject's age and gender are (the last two columns).
    static let ageColumn = names.count - 2
    static let genderColumn = names.count - 1

    public let epochCount: Int
    /// epochCount × 36, row-major; NaN and ±inf where sleepecg has them.
    public let values: [Double]

    public subscript(epoch: Int, feature: Int) -> Double { values[epoch * Self.names.count + feature] }

    public func row(_ epoch: Int) -> ArraySlice<Double> {
        values[(epoch * Self.names.count)..<((epoch + 1) * Self.names.count)]
    }

    /// Computes the features of a recording.
    public init(_ recording: SleepRecording) {
        self.init(recording, vectors: EpochFeatures.compute(recording.rr, epochs: Array(0..<recording.rr.epochCount)))
    }

    /// The features of a recording from its epochs' vectors (`EpochFeatures.compute`, or kept ones
    /// whose `EpochFeatures.inputs` are unchanged), one per epoch in order: pNN50 and pNN20 divided
    /// by the widest window, and the recording's start time and subject appended.
    ///
    /// `unknownSubject`: the age and gender columns where the recording's subject lacks them; NaN
    /// (missing) as sleepecg has them, unless the classifier is told otherwise.
    public init(_ recording: SleepRecording, vectors: [EpochFeatureVector], unknownSubject: (age: Double, gender: Double) = (.nan, .nan)) {
        let widest = vectors.map(\.windowIntervals).max() ?? 0
        let metadata = [
            Double(recording.startClockSeconds),
            recording.subject.age.map(Double.init) ?? unknownSubject.age,
            recording.subject.gender.map { Double($0.rawValue) } ?? unknownSubject.gender,
        ]
        var values: [Double] = []
        values.reserveCapacity(vectors.count * Self.names.count)
        for vector in vectors {
            var time = Array(vector.values[0..<TimeDomainFeatures.names.count])
            TimeDomainFeatures.fillPNN(&time, widestWindow: widest)
            values.append(contentsOf: time)
            values.append(contentsOf: vector.values[TimeDomainFeatures.names.count...])
            values.append(contentsOf: metadata)
        }
        epochCount = vectors.count
        self.values = values
    }

    /// Index ranges of the intervals whose end time is in `[epoch start − lookback, epoch start +
    /// lookforward)`, per epoch (sleepecg's `_split_into_windows`).
    static func windows(times: [Double], epochs: Int, lookback: Int, lookforward: Int) -> [Range<Int>] {
        var lower = 0
        var upper = 0
        return (0..<epochs).map { epoch in
            let start = Double(epoch * SleepEpoch.seconds - lookback)
            let end = Double(epoch * SleepEpoch.seconds + lookforward)
            while lower < times.count && times[lower] < start { lower += 1 }
            if upper < lower { upper = lower }
            while upper < times.count && times[upper] < end { upper += 1 }
            return lower..<upper
        }
    }
}
