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
    /// Computed here with a complete window: to be saved (`Store.saveSleepEpochs`).
    private(set) var fresh: [StoredSleepEpoch] = []
    private(set) var reused = 0
    private(set) var computed = 0
    /// Kept rows that failed their check (`SleepEpochRead`), computed again.
    let failedCheck: Int

    init(sensor: String, read: SleepEpochRead? = nil) {
        self.sensor = sensor
        kept = read?.epochs ?? [:]
        failedCheck = read?.failedCheck ?? 0
    }

    /// The Unix-second range whose kept epochs a night window can use.
    static func range(ofWindow window: (start: Int64, end: Int64)) -> (fromS: Int64, toS: Int64) {
        (window.start / 1000 - Int64(SleepEpoch.seconds), window.end / 1000 + Int64(SleepEpoch.seconds))
    }

    /// The segment's epochs, as `WakeSleepClassifier.classify` labels its recording on the grid.
    func epochs(
        of segment: ArraySlice<StoredHeartRate>, timeZone: TimeZone, gapLimitMs: Int64, subject: SubjectData = SubjectData()
    ) -> [SleepEpoch] {
        var builder = RRSeriesBuilder(gapLimitMs: gapLimitMs)
        for sample in segment {
            builder.add(HeartRateNotification(timeMs: sample.timeMs, rr1024: sample.rrIntervals, valid: sample.valid))
        }
        guard let first = segment.first else { return [] }
        let firstBeat = Date(unixMs: first.timeMs)
        guard let recording = try? builder.recording(utcOffsetSeconds: timeZone.secondsFromGMT(for: firstBeat), subject: subject).alignedToEpochGrid()
        else { return [] }
        let inputs = EpochFeatures.inputs(of: recording)
        let gridStart = Int64(recording.startUnix)
        func start(_ epoch: Int) -> Int64 { gridStart + Int64(epoch * SleepEpoch.seconds) }
        var vectors: [EpochFeatureVector?] = inputs.indices.map { epoch in
            guard let row = kept[start(epoch)], row.inputs == inputs[epoch].fingerprint else { return nil }
            return EpochFeatureVector(bytes: row.vector)
        }
        let missing = vectors.indices.filter { vectors[$0] == nil }
        for (epoch, vector) in zip(missing, EpochFeatures.compute(recording.rr, epochs: missing)) {
            vectors[epoch] = vector
            guard inputs[epoch].isComplete else { continue }
            let row = StoredSleepEpoch(sensor: sensor, startS: start(epoch), inputs: inputs[epoch].fingerprint, vector: vector.bytes)
            kept[row.startS] = row
            fresh.append(row)
        }
        reused += vectors.count - missing.count
        computed += missing.count
        return WakeSleepClassifier.classify(recording, vectors: vectors.compactMap { $0 })
    }

    /// Logs what was not served from the kept rows: damaged ones (an error) and the work done.
    func log(_ logger: Logger, day: LocalDay) {
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
