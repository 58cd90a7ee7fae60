import Foundation
import Testing
import TestKit

@testable import SleepStaging

/// The pieces of the port checked on their own, without Python: numpy's semantics where sleepecg
/// relies on them, the FFT against a plain DFT, Keras' masking, and input sleepecg itself would
/// fail on.
@Suite("Feature and network parts")
struct FeaturePartsTests {
    @Test("FFTW's real transform of 2040 points equals a plain DFT")
    func fftMatchesDFT() {
        let n = 2040
        var generator = SplitMix(seed: 7)
        let signal = (0..<n).map { _ in generator.nextUnit() - 0.5 }
        let (re, im) = RealFFT(count: n).transform(real: signal)
        var worst = 0.0
        #expect(re.count == n / 2 + 1)
        for k in stride(from: 0, through: n / 2, by: 17) {
            var sumRe = 0.0
            var sumIm = 0.0
            for (j, x) in signal.enumerated() {
                let angle = -2 * Double.pi * Double((j * k) % n) / Double(n)
                sumRe += x * cos(angle)
                sumIm += x * sin(angle)
            }
            worst = max(worst, abs(sumRe - re[k]), abs(sumIm - im[k]))
        }
        #expect(worst < 1e-10)
    }

    @Test("numpy's median, linear percentile, nanstd and pairwise sum")
    func numpySemantics() {
        typealias R = NumpyReductions
        #expect(R.percentile(sorted: [1, 2, 3, 4], 25) == 1.75)
        #expect(R.percentile(sorted: [1, 2, 3, 4], 75) == 3.25)
        #expect(R.percentile(sorted: [5], 75) == 5)
        #expect(R.median(sorted: [1, 2, 3, 10]) == 2.5)
        #expect(R.median(sorted: [1, 2, 10]) == 2)
        #expect(R.median(sorted: []).isNaN)
        #expect(abs(R.nanStd([1, .nan, 3, .nan], ddof: 1) - 2.0.squareRoot()) < 1e-15)
        #expect(R.nanStd([1, .nan], ddof: 1).isNaN, "one value: no degrees of freedom")
        #expect(R.nanMean([.nan, .nan]).isNaN)
        #expect(R.nanMax([.nan, 2, .nan, 7, 3]) == 7)
        #expect(R.nanMin([.nan, .nan]).isNaN)
        #expect(R.sum((1...1000).map(Double.init)) == 500_500)
        // 0.1 added 10 times: numpy's pairwise order gives 1.0 exactly here, a plain loop does not.
        #expect(R.sum(Array(repeating: 0.1, count: 10)) == 1.0)
    }

    @Test("pNN50 and pNN20 divide by the widest window of the recording, as sleepecg's ragged array does")
    func pnnDenominatorIsRecordingWide() {
        // Epoch 0: 3 intervals (2 differences, one > 50 ms); epoch 1: 5 intervals.
        let nn = [0.8, 0.9, 0.91, 0.8, 0.81, 0.82, 0.83, 0.84]
        let features = TimeDomainFeatures.compute(nn: nn, windows: [0..<3, 3..<8])
        let pnn50 = TimeDomainFeatures.names.firstIndex(of: "pNN50") ?? 0
        #expect(features[pnn50] == 1.0 / 4.0, "1 difference > 50 ms over the widest row's 4 columns, not 1/2")
    }

    @Test("interpolation as np.interp inside interp1d: exact hits, NaN neighbours, NaN outside")
    func interpolation() {
        let result = FrequencyDomainFeatures.interpolate([0.5, 1, 1.5, 2, 2.5, 3.5], [1, 2, 3], [.nan, 4, 6])
        #expect(result[0].isNaN, "before the first beat")
        #expect(result[1].isNaN, "exact hit on a NaN")
        #expect(result[2].isNaN, "next to a NaN")
        #expect(result[3] == 4, "exact hit")
        #expect(result[4] == 5)
        #expect(result[5].isNaN, "after the last beat")
    }

    @Test("the epoch count is Python's floor division of the last beat time by 30 s")
    func epochCount() throws {
        #expect(try RRSeries(heartbeatTimes: [0, 59.99999999999999]).epochCount == 1)
        #expect(try RRSeries(heartbeatTimes: [0, 60]).epochCount == 2)
        #expect(try RRSeries(heartbeatTimes: [0, 29.9]).epochCount == 0)
        #expect(try RRSeries(heartbeatTimes: [0]).epochCount == 0)
        #expect(throws: SleepStagingError.self) { try RRSeries(heartbeatTimes: [0, 1, 1]) }
        #expect(throws: SleepStagingError.self) { try RRSeries(heartbeatTimes: [0, .nan]) }
    }

    static func hundredBeats() throws -> RRSeries { try RRSeries(heartbeatTimes: (0...100).map { Double($0) }) }

    @Test("the start's local clock time: whole seconds, wrapped at midnight")
    func startClockTime() throws {
        let rr = try Self.hundredBeats()
        // 2026-11-20T23:59:59.9Z at +00:30 → 00:29:59; at −01:00 → 22:59:59.
        let late = SleepRecording(startUnix: 1_795_219_199.9, utcOffsetSeconds: 1800, rr: rr)
        #expect(late.startClockSeconds == 29 * 60 + 59)
        #expect(SleepRecording(startUnix: 1_795_219_199.9, utcOffsetSeconds: -3600, rr: rr).startClockSeconds == 82_799)
    }

    @Test("unknown subject data is NaN")
    func unknownSubjectData() throws {
        let rr = try Self.hundredBeats()
        let features = SleepFeatures(SleepRecording(startUnix: 1_795_219_199.9, utcOffsetSeconds: 1800, rr: rr))
        let age = SleepFeatures.names.firstIndex(of: "age") ?? 0
        #expect(features[0, age].isNaN && features[0, age + 1].isNaN)
    }

    @Test("an unknown subject given as the training mean: the batch normalisation's moving mean of age and gender, known values untouched")
    func unknownSubjectAsTrainingMean() throws {
        let rr = try Self.hundredBeats()
        let recording = SleepRecording(startUnix: 0, utcOffsetSeconds: 0, rr: rr)
        let vectors = EpochFeatures.compute(rr, epochs: Array(0..<rr.epochCount))
        let mean = WakeSleepClassifier.UnknownSubject.trainingMean.features
        // MESA's sleepers: 54–95 years, mean about 69, a little under half men.
        #expect(mean.age > 60 && mean.age < 75 && mean.gender > 0.3 && mean.gender < 0.7, "\(mean)")
        let unknown = SleepFeatures(recording, vectors: vectors, unknownSubject: mean)
        #expect(unknown[0, SleepFeatures.ageColumn] == mean.age && unknown[0, SleepFeatures.genderColumn] == mean.gender)
        var known = recording
        known.subject = SubjectData(age: 30, gender: .female)
        let given = SleepFeatures(known, vectors: vectors, unknownSubject: mean)
        #expect(given[0, SleepFeatures.ageColumn] == 30 && given[0, SleepFeatures.genderColumn] == 0)
    }

    @Test("known age and gender are features, gender coded as sleepecg codes it")
    func subjectData() throws {
        let rr = try Self.hundredBeats()
        let age = SleepFeatures.names.firstIndex(of: "age") ?? 0
        let known = SleepFeatures(SleepRecording(
            startUnix: 0, utcOffsetSeconds: 0, rr: rr, subject: SubjectData(age: 70, gender: .female)))
        #expect(known[0, age] == 70 && known[0, age + 1] == 0)
    }

    @Test("recordings sleepecg cannot take (under two beats, one epoch, no clean window) give epochs or none, never a crash")
    func degenerateRecordings() throws {
        #expect(WakeSleepClassifier.classify(SleepRecording(startUnix: 0, utcOffsetSeconds: 0, rr: try RRSeries(heartbeatTimes: []))).isEmpty)
        let one = WakeSleepClassifier.classify(SleepRecording(
            startUnix: 0, utcOffsetSeconds: 0, rr: try RRSeries(heartbeatTimes: (0...40).map { Double($0) * 0.9 })))
        #expect(one.count == 1)
        // Every interval out of limits: no feature but the clock time, still a label per epoch.
        let noise = WakeSleepClassifier.classify(SleepRecording(
            startUnix: 0, utcOffsetSeconds: 0, rr: try RRSeries(heartbeatTimes: (0...400).map { Double($0) * 0.25 })))
        #expect(noise.count == 3)
        #expect(noise.allSatisfy { $0.validBeats == 0 && $0.sleepProbability.isFinite })
    }

    @Test("a masked epoch (every input at the mask value) is skipped by the GRUs, as Keras does")
    func maskedEpochIsSkipped() {
        let width = WakeSleepNetwork.inputWidth
        var generator = SplitMix(seed: 3)
        let rows = (0..<6).map { _ in (0..<width).map { _ in generator.nextUnit() * 2 } }
        let masked = Array(repeating: -1.0, count: width)
        let network = WakeSleepNetwork.wsGruMesa
        let with = network.probabilities(features: (rows[0..<3] + [masked] + rows[3...]).flatMap { $0 }, epochs: 7)
        let without = network.probabilities(features: rows.flatMap { $0 }, epochs: 6)
        for (a, b) in zip(with[0..<3] + with[4...], without) {
            #expect(zip(a, b).allSatisfy { abs($0 - $1) < 1e-12 })
        }
        // Its own output: the last layer on the GRUs' zeros, softmax of the bias.
        let bias = ModelWeights.wsGruMesa.tensor("dense_1/bias", count: 3).map(Double.init)
        let expected = bias.map { exp($0) / bias.map { exp($0) }.reduce(0, +) }
        #expect(zip(with[3], expected).allSatisfy { abs($0 - $1) < 1e-12 })
    }

    @Test("a night's few missing epochs at both ends are computed an hour's span at a time, bit for bit as all epochs are")
    func spreadEpochsAreChunkedBySpan() throws {
        let night = AssembledNight.beatTimesMs(hourIntervalsMs: NSRFixture.shared.intervalsMs).map { Double($0) / 1000 }
        let rr = try RRSeries(heartbeatTimes: night)
        let epochs = rr.epochCount
        // The epochs a cached night misses: its first few and its last few.
        let wanted = Array(0..<4) + Array((epochs - 12)..<epochs)
        let runs = EpochFeatures.spans(of: wanted)
        #expect(runs.count == 2, "the two ends are two runs, not one over the whole night: \(runs.map { [$0.first, $0.last] })")
        #expect(runs.allSatisfy { ($0.max() ?? 0) - ($0.min() ?? 0) < EpochFeatures.epochsPerResample })
        #expect(Array(runs.joined()) == wanted, "the runs keep the wanted epochs and their order")

        let all = EpochFeatures.compute(rr, epochs: Array(0..<epochs))
        let some = EpochFeatures.compute(rr, epochs: wanted)
        #expect(some.count == wanted.count)
        for (vector, epoch) in zip(some, wanted) {
            #expect(vector.isIdentical(to: all[epoch]), "epoch \(epoch) as in the whole night's computation")
        }
        #expect(EpochFeatures.spans(of: []).isEmpty)
        #expect(EpochFeatures.spans(of: [500, 3, 7]).map(Array.init) == [[500], [3, 7]], "out of order: a run per place")
    }
}
