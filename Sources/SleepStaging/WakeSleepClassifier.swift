/// One 30-s epoch of a classified recording.
public struct SleepEpoch: Sendable, Equatable {
    public static let seconds = 30

    /// sleepecg's `wake-sleep` classes. The model has a third output, UNDEFINED, that it learnt
    /// for padding and masked input; it wins only for such input.
    public enum Stage: Int, Sendable {
        case undefined = 0
        case sleep = 1
        case wake = 2
    }

    /// Unix seconds.
    public var start: Double
    /// The most probable class, as `sleepecg.stage()` returns it (argmax).
    public var stage: Stage
    public var sleepProbability: Double
    public var wakeProbability: Double
    /// RR intervals within sleepecg's limits (0.3–2 s) that ended in this epoch: 0 when the strap
    /// sent nothing usable (taken off, lost). The classifier still labels such an epoch from the
    /// data around it; `SleepPeriods` decides when a run of them is a gap.
    public var validBeats: Int

    public init(start: Double, stage: Stage, sleepProbability: Double, wakeProbability: Double, validBeats: Int) {
        self.start = start
        self.stage = stage
        self.sleepProbability = sleepProbability
        self.wakeProbability = wakeProbability
        self.validBeats = validBeats
    }

    public var end: Double { start + Double(Self.seconds) }
}

/// sleepecg 0.6.0's `ws-gru-mesa` wake/sleep classifier, ported: `stage(clf, record)` for a
/// recording, without Python. Pure and synchronous: one call classifies a whole recording (a
/// night of 9 h takes milliseconds; see docs/sleep.md).
public enum WakeSleepClassifier {
    /// The method's name, for the published `sleep.method`.
    public static let method = "sleepecg-ws-gru-mesa"

    /// How an age or a sex nobody gave reaches the network.
    public enum UnknownSubject: Sendable {
        /// Missing, as in sleepecg 0.6.0: the mask value −1, an age and a gender the network never
        /// saw in training (MESA's sleepers were 54–95 and every one's sex was known). On slpdb's
        /// 11 whole nights without `[person]` the agent found 10, mean |TST error| 74.0 min.
        case missing
        /// The training data's mean, the batch normalisation's moving mean (66.1 years, gender
        /// 0.44): the input the network reads as an average sleeper of its cohort. The same nights:
        /// 11 of 11, 50.5 min (docs/sleep.md, "Age and gender").
        case trainingMean
    }

    /// Classifies every epoch of the recording: `int(last beat // 30)` epochs from its start.
    public static func classify(_ recording: SleepRecording, unknownSubject: UnknownSubject = .missing) -> [SleepEpoch] {
        classify(recording, vectors: EpochFeatures.compute(recording.rr, epochs: Array(0..<recording.rr.epochCount)),
                 unknownSubject: unknownSubject)
    }

    /// The same from the recording's epoch vectors, one per epoch in order (kept ones reused: the
    /// bidirectional network still reads the whole night, which is the cheap part).
    ///
    /// Both are consumed: the beats and the vectors are let go once the features are made, before
    /// the network runs, where the caller gives them up (`consume`; issue 32).
    public static func classify(
        _ recording: consuming SleepRecording, vectors: consuming [EpochFeatureVector], unknownSubject: UnknownSubject = .missing
    ) -> [SleepEpoch] {
        let startUnix = recording.startUnix
        let validBeats = vectors.map(\.validBeats)
        // An initializer takes its arguments owned: they go with it.
        let features = SleepFeatures(consume recording, vectors: consume vectors, unknownSubject: unknownSubject.features)
        let probabilities = WakeSleepNetwork.wsGruMesa.probabilities(features: features.values, epochs: features.epochCount)
        return probabilities.enumerated().map { epoch, p in
            // argmax, the first of equals as numpy's.
            var best = 0
            for index in 1..<p.count where p[index] > p[best] { best = index }
            return SleepEpoch(
                start: startUnix + Double(epoch * SleepEpoch.seconds),
                stage: SleepEpoch.Stage(rawValue: best) ?? .undefined,
                sleepProbability: p[SleepEpoch.Stage.sleep.rawValue],
                wakeProbability: p[SleepEpoch.Stage.wake.rawValue],
                validBeats: validBeats[epoch])
        }
    }

    static func validBeatsPerEpoch(_ rr: RRSeries, epochs: Int) -> [Int] {
        var counts = [Int](repeating: 0, count: epochs)
        for (interval, end) in zip(rr.intervals, rr.endTimes)
        where interval >= WsGruMesaArchive.minRRSeconds && interval <= WsGruMesaArchive.maxRRSeconds && end >= 0 {
            let epoch = Int(end / Double(SleepEpoch.seconds))
            if epoch < epochs { counts[epoch] += 1 }
        }
        return counts
    }
}

extension WakeSleepClassifier.UnknownSubject {
    /// The age and gender columns for a subject without them.
    var features: (age: Double, gender: Double) {
        switch self {
        case .missing: (.nan, .nan)
        case .trainingMean:
            (WakeSleepNetwork.wsGruMesa.trainingMeans[SleepFeatures.ageColumn],
             WakeSleepNetwork.wsGruMesa.trainingMeans[SleepFeatures.genderColumn])
        }
    }
}
