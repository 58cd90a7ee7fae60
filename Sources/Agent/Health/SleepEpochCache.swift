import Foundation
import Logging
import SleepStaging
import Store

/// A wear segment's classified epochs from kept per-epoch features (docs/storage.md, "Sleep
/// epochs"): the segment is a recording on the absolute 30-s grid; an epoch whose kept vector was
/// computed from exactly the beats now around it (`EpochFeatures.inputs`) is reused, every other
/// one computed, and those whose window is complete are handed back (`fresh`) to be kept. The
/// network then reads the whole night, as before: that part is cheap.
///
/// One strap's epochs (the night's dominant sensor), for one computation of a night.
final class SleepEpochCache {
    let sensor: String
    private var kept: [Int64: StoredSleepEpoch]
    /// Computed here with a complete window: to be saved (`Store.saveSleepEpochs`, `takeFresh`).
    private var fresh: [StoredSleepEpoch] = []
    private(set) var reused = 0
    private(set) var computed = 0
    /// Kept rows that failed their check (`SleepEpochRead`), computed again.
    private(set) var failedCheck: Int

    init(sensor: String, read: SleepEpochRead? = nil) {
        self.sensor = sensor
        kept = read?.epochs ?? [:]
        failedCheck = read?.failedCheck ?? 0
    }

    /// The strap's kept epochs of a night window, read through a read-only connection.
    convenience init(sensor: String, window: (start: Int64, end: Int64), reader: StoreReader) throws {
        let range = Self.range(ofWindow: window)
        self.init(sensor: sensor, read: try reader.read { try $0.sleepEpochs(sensor: sensor, fromS: range.fromS, toS: range.toS) })
    }

    /// The epochs computed since the last call, to be kept; the cache keeps using them.
    func takeFresh() -> [StoredSleepEpoch] {
        defer { fresh = [] }
        return fresh
    }

    /// The Unix-second range whose kept epochs a night window can use.
    static func range(ofWindow window: (start: Int64, end: Int64)) -> (fromS: Int64, toS: Int64) {
        (window.start / 1000 - Int64(SleepEpoch.seconds), window.end / 1000 + Int64(SleepEpoch.seconds))
    }

    /// The epochs of `segment` (indices into `samples`), as `WakeSleepClassifier.classify` labels
    /// its recording on the grid.
    func epochs(
        of samples: NightSamples.Series, _ segment: Range<Int>, timeZone: TimeZone, gapLimitMs: Int64,
        subject: SubjectData = SubjectData()
    ) -> [SleepEpoch] {
        guard let (recording, vectors) = vectors(of: samples, segment, timeZone: timeZone, gapLimitMs: gapLimitMs, subject: subject)
        else { return [] }
        return WakeSleepClassifier.classify(consume recording, vectors: consume vectors, unknownSubject: .trainingMean)
    }

    /// Computes and keeps the vectors of the segment's complete epochs that are not kept yet, and
    /// classifies nothing: a night whose beats are still arriving (a backlog landing) has its
    /// epochs ready when it is classified (issue 32).
    ///
    /// `fromMs`: only the segment's tail from then on is built into beats, not the whole night
    /// again (a landing night is prepared every half second: rebuilding it all made each round
    /// linear in the night, 400–700 ms on a quarter of a core, and a query waited behind it).
    /// Beats are anchored by 5-minute slot of the clock, so from the slot boundary at or before
    /// `fromMs` the tail's beats are the whole night's, but for the first one's interval (the
    /// time since the beat before, unknown to the tail); only epochs whose window lies after that
    /// slot are considered, and they come out bit for bit as from the whole night.
    func prepare(of samples: NightSamples.Series, _ segment: Range<Int>, timeZone: TimeZone, gapLimitMs: Int64, fromMs: Int64? = nil) {
        var tail = segment
        var firstEpochS: Int64?
        if let fromMs, let first = segment.first {
            let slot = fromMs / RRSeriesBuilder.blockMs * RRSeriesBuilder.blockMs
            // A segment over before the tail was whole at the last preparation: nothing new.
            if let last = segment.last, samples.timesMs[last] < slot { return }
            // The first notification at or after the slot boundary (a segment is in time order).
            let cut = samples.timesMs[segment].lowerBound(of: slot)
            if cut > first, cut < segment.upperBound {
                tail = cut..<segment.upperBound
                firstEpochS = slot / 1000 + Self.tailContextS
            }
        }
        _ = vectors(
            of: samples, tail, timeZone: timeZone, gapLimitMs: gapLimitMs, subject: SubjectData(), onlyComplete: true,
            offsetAt: segment.first, firstEpochS: firstEpochS)
    }

    /// How far after a tail's first slot boundary its first epoch may start: past the first
    /// beat's window (the model's 240-s lookback and the epoch itself) with a slot to spare.
    static let tailContextS: Int64 = 600

    /// The segment's beats as a recording on the epoch grid, moved there in place: the builder's
    /// runs are let go before the features are computed, and no second copy of the beat times is
    /// made (held beside each other, a night's beats were in memory four times over; issue 32).
    private static func recording(
        of samples: NightSamples.Series, _ segment: Range<Int>, gapLimitMs: Int64, utcOffsetSeconds: Int, subject: SubjectData
    ) -> SleepRecording? {
        var builder = RRSeriesBuilder(gapLimitMs: gapLimitMs)
        builder.add(samples, segment)
        return try? builder.recording(utcOffsetSeconds: utcOffsetSeconds, subject: subject, onEpochGrid: true)
    }

    /// The segment's recording on the grid, without its beats (`RRSeries.none`), and its epochs'
    /// vectors: kept ones where their inputs match, the others computed (`onlyComplete`: only
    /// those whose window is complete, and nothing is returned).
    private func vectors(
        of samples: NightSamples.Series, _ segment: Range<Int>, timeZone: TimeZone, gapLimitMs: Int64, subject: SubjectData,
        onlyComplete: Bool = false, offsetAt offsetIndex: Int? = nil, firstEpochS: Int64? = nil
    ) -> (SleepRecording, [EpochFeatureVector])? {
        guard let first = segment.first else { return nil }
        // The zone's offset where the whole segment starts, also for its tail.
        let firstBeat = Date(unixMs: samples.timesMs[offsetIndex ?? first])
        guard
            var recording = Self.recording(
                of: samples, segment, gapLimitMs: gapLimitMs, utcOffsetSeconds: timeZone.secondsFromGMT(for: firstBeat), subject: subject)
        else { return nil }
        let inputs = EpochFeatures.inputs(of: recording)
        let gridStart = Int64(recording.startUnix)
        func start(_ epoch: Int) -> Int64 { gridStart + Int64(epoch * SleepEpoch.seconds) }
        // A kept row serves while its inputs match (and it is a whole vector: the only way its
        // bytes cannot be read back).
        let matching = inputs.indices.map { epoch in
            kept[start(epoch)].map { $0.inputs == inputs[epoch].fingerprint && $0.vector.count == EpochFeatureVector.byteCount } ?? false
        }
        let missing = inputs.indices.filter { epoch in
            !matching[epoch] && (!onlyComplete || inputs[epoch].isComplete) && start(epoch) >= (firstEpochS ?? .min)
        }
        var computedVectors: [Int: EpochFeatureVector] = [:]
        for (epoch, vector) in zip(missing, EpochFeatures.compute(recording.rr, epochs: missing)) {
            computedVectors[epoch] = vector
            guard inputs[epoch].isComplete else { continue }
            let row = StoredSleepEpoch(sensor: sensor, startS: start(epoch), inputs: inputs[epoch].fingerprint, vector: vector.bytes)
            kept[row.startS] = row
            fresh.append(row)
        }
        reused += matching.lazy.filter { $0 }.count
        computed += missing.count
        // Preparing: the kept vectors are not decoded, nothing is classified.
        guard !onlyComplete else { return nil }
        // The beats are done with: held beside the decoded vectors, the features and the network,
        // a night's were the largest part of its classification (issue 32).
        recording.rr = .none
        var vectors: [EpochFeatureVector] = []
        vectors.reserveCapacity(inputs.count)
        for epoch in inputs.indices {
            if let vector = computedVectors[epoch] {
                vectors.append(vector)
            } else if let row = kept[start(epoch)], let vector = EpochFeatureVector(bytes: row.vector) {
                vectors.append(vector)
            }
        }
        return (recording, vectors)
    }

    /// Logs what was not served from the kept rows (damaged ones: an error, once) and the work
    /// done since the last call.
    func log(_ logger: Logger, day: LocalDay) {
        defer { (reused, computed, failedCheck) = (0, 0, 0) }
        if failedCheck > 0 {
            logger.error("kept sleep epochs failed their check; computed again", metadata: [
                "date": "\(day)", "sensor": "\(sensor)", "count": "\(failedCheck)",
            ])
        }
        logger.debug("sleep epochs", metadata: [
            "date": "\(day)", "reused": "\(reused)", "computed": "\(computed)", "kept_new": "\(fresh.count)",
        ])
    }

    static let logger = Logger(label: "keepalive.sleep")
}
