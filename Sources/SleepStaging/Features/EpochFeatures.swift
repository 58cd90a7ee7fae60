/// The per-epoch half of `SleepFeatures`: each epoch's vector from the beats around it alone, and
/// a fingerprint of exactly those beats, so a kept vector is reused only while its inputs are
/// unchanged (a late backlog inside its window, or a run of beats re-anchored, changes them).
///
/// Epoch e of a recording starts `30 e` s after the recording start. A recording whose start is
/// a multiple of 30 s Unix time puts every epoch on one absolute grid: the same beats then give
/// the same epoch, bit for bit, wherever a segment was cut (times relative to such a start are
/// exact differences, and the 4 Hz grid points are exact).
public enum EpochFeatures {
    typealias Archive = WsGruMesaArchive

    /// What one epoch's vector depends on.
    public struct Inputs: Sendable, Equatable {
        /// FNV-1a over the epoch's start and every beat (end time and interval, as IEEE bits)
        /// from the one before its window to the one after, and whether those exist.
        public let fingerprint: UInt64
        /// A beat ended at or after the window's end: later beats cannot change this epoch.
        public let isComplete: Bool
    }

    /// The inputs of every epoch of `recording` (`rr.epochCount` of them). Linear in the beats.
    public static func inputs(of recording: SleepRecording) -> [Inputs] {
        let rr = recording.rr
        let windows = SleepFeatures.windows(
            times: rr.endTimes, epochs: rr.epochCount, lookback: Archive.lookbackSeconds, lookforward: Archive.lookforwardSeconds)
        let count = rr.endTimes.count
        return windows.enumerated().map { epoch, window in
            var hash = FNV1a()
            hash.add((recording.startUnix + Double(epoch * SleepEpoch.seconds)).bitPattern)
            hash.add(window.lowerBound > 0 ? 1 : 0)
            hash.add(window.upperBound < count ? 1 : 0)
            for index in max(window.lowerBound - 1, 0)..<min(window.upperBound + 1, count) {
                hash.add((recording.startUnix + rr.endTimes[index]).bitPattern)
                hash.add(rr.intervals[index].bitPattern)
            }
            return Inputs(fingerprint: hash.value, isComplete: window.upperBound < count)
        }
    }

    /// The vectors of the given epochs (indices into `0..<rr.epochCount`), in that order.
    public static func compute(_ rr: RRSeries, epochs wanted: [Int]) -> [EpochFeatureVector] {
        let epochs = rr.epochCount
        guard !wanted.isEmpty, epochs > 0 else { return [] }
        let windows = SleepFeatures.windows(
            times: rr.endTimes, epochs: epochs, lookback: Archive.lookbackSeconds, lookforward: Archive.lookforwardSeconds)
        let spectrum = FrequencyDomainFeatures.EpochSpectrum(
            lookback: Archive.lookbackSeconds, lookforward: Archive.lookforwardSeconds, maxNaNFraction: Archive.maxNaNFraction)
        let beats = WakeSleepClassifier.validBeatsPerEpoch(rr, epochs: epochs)
        var vectors: [EpochFeatureVector] = []
        vectors.reserveCapacity(wanted.count)
        // The 4 Hz series a chunk of epochs at a time: a grid point's value depends on nothing
        // but its place, so a chunk's series is the whole night's, bit for bit, and a night's
        // 4 Hz series (2 MiB for 18 hours) is never held whole. A chunk spans at most
        // `epochsPerResample` epochs, not that many of the wanted: a night's few missing epochs
        // lie at both of its ends, and one chunk over them all was the whole night again.
        for chunk in spans(of: wanted) {
            guard let first = chunk.min(), let last = chunk.max() else { continue }
            // The chunk's beats, with the one before its first window and the one after its last:
            // every grid point of the chunk lies between two of them, as it does in the whole
            // night's, so the interpolation is the same. A copy of the night's cleaned intervals
            // was as large as its beats.
            let beatsFrom = max(windows[first].lowerBound - 1, 0)
            let beatsTo = min(windows[last].upperBound + 1, rr.endTimes.count)
            let nn = rr.intervals[beatsFrom..<beatsTo].map { value in
                value < Archive.minRRSeconds || value > Archive.maxRRSeconds ? Double.nan : value
            }
            let resampled = FrequencyDomainFeatures.resample(
                nn: nn, times: Array(rr.endTimes[beatsFrom..<beatsTo]), epochs: epochs, lookback: Archive.lookbackSeconds,
                lookforward: Archive.lookforwardSeconds, only: first...last)
            for epoch in chunk {
                let window = (windows[epoch].lowerBound - beatsFrom)..<(windows[epoch].upperBound - beatsFrom)
                vectors.append(EpochFeatureVector(
                    values: TimeDomainFeatures.epoch(nn[window]) + spectrum.features(epoch: epoch, resampled: resampled, firstEpoch: first),
                    windowIntervals: windows[epoch].count, validBeats: beats[epoch]))
            }
        }
        return vectors
    }

    /// Epochs whose 4 Hz series is built at once: an hour (14 400 points and a window's 2 040).
    static let epochsPerResample = 120

    /// `wanted` cut, in its order, into runs whose epochs lie within `epochsPerResample` of the
    /// run's smallest and largest.
    static func spans(of wanted: [Int]) -> [ArraySlice<Int>] {
        var runs: [ArraySlice<Int>] = []
        var start = 0
        var (low, high) = (Int.max, Int.min)
        for (index, epoch) in wanted.enumerated() {
            let (newLow, newHigh) = (min(low, epoch), max(high, epoch))
            if index > start, newHigh - newLow >= epochsPerResample {
                runs.append(wanted[start..<index])
                (start, low, high) = (index, epoch, epoch)
            } else {
                (low, high) = (newLow, newHigh)
            }
        }
        if start < wanted.count { runs.append(wanted[start...]) }
        return runs
    }
}

/// 64-bit FNV-1a, byte by byte over little-endian words.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ word: UInt64) {
        for shift in stride(from: UInt64(0), to: 64, by: 8) {
            value = (value ^ ((word >> shift) & 0xff)) &* 0x0000_0100_0000_01b3
        }
    }
}
