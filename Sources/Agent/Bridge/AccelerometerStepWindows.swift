import Logging
import SensorBridge
import StepCounting
import Store

/// Each strap's accelerometer batches (`pmd_acc`) turned into stored step windows: steps are
/// counted here, at ingest, because the detector needs the continuous signal and the raw 50 Hz
/// stream is never stored (docs/steps.md). One `AccelerationStepCounter` per sensor; a window
/// is handed out once no later sample can change it, and every open window when its sensor goes
/// quiet or the agent stops, so what was counted is stored.
struct AccelerometerStepWindows {
    private var counters: [String: (counter: AccelerationStepCounter, lastBatch: ContinuousClock.Instant)] = [:]
    /// The origins (`BridgeOrigin`) of the batches lately counted at their receive time, per
    /// sensor: such a batch's time says nothing of it, so its replay is told by this. The last
    /// `rememberedOrigins` of each sensor, about 25 minutes at 50 Hz.
    private var counted: [String: RecentOrigins] = [:]
    /// Per sensor, the origins of batches counted but not yet in a window handed out. Batches are
    /// not stored, their windows are: a window carries the origins of the batches before it
    /// (`StoredStepRecord.batchOrigins`), so an agent that restarts remembers them from the store
    /// (`init(remembering:)`). The batch that closed a window stays here, since part of it may
    /// lie in the next, still open window: after a power cut its replay is counted again rather
    /// than what it measured lost.
    private var unstored: [String: [Int64]] = [:]

    static let rememberedOrigins = 2048

    /// Windows that remember the origins `StoreReads.recentAccelerometerOrigins` read back.
    init(remembering origins: [String: [Int64]] = [:]) {
        for (sensor, list) in origins {
            var recent = RecentOrigins(capacity: Self.rememberedOrigins)
            for origin in list { recent.insert(origin) }
            counted[sensor] = recent
        }
    }

    /// The windows `batch` closed, or why it was refused (a batch overlapping what was counted, or
    /// with the origin of one counted: a replay).
    mutating func add(
        _ batch: AccelerationBatch, sensor: String, firstSampleMs: Int64, receivedMs: Int64, origin: Int64? = nil
    ) -> Result<[StoredStepRecord], AccelerationStepCounter.Refusal> {
        if let origin, counted[sensor]?.contains(origin) == true { return .failure(.replayed) }
        var counter = counters[sensor]?.counter ?? AccelerationStepCounter()
        let result = counter.add(batch, firstSampleMs: firstSampleMs)
        // A refused batch (a replay) is no new signal: the sensor still counts as quiet.
        guard case .success(let windows) = result else { return result.map { _ in [] } }
        counters[sensor] = (counter, .now)
        let records = takeRecords(of: windows, sensor: sensor, receivedMs: receivedMs)
        if let origin {
            counted[sensor, default: RecentOrigins(capacity: Self.rememberedOrigins)].insert(origin)
            unstored[sensor, default: []].append(origin)
        }
        return .success(records)
    }

    /// `sensor`'s closed windows as stored, the newest carrying the origins of the batches not yet
    /// in a stored window (which are then taken).
    private mutating func takeRecords(of windows: [StepWindow], sensor: String, receivedMs: Int64) -> [StoredStepRecord] {
        let origins = windows.isEmpty ? [] : unstored.removeValue(forKey: sensor) ?? []
        return windows.enumerated().map { index, window in
            StoredStepRecord(
                sensor: sensor, firstSampleMs: window.firstSampleMs, lastSampleMs: window.lastSampleMs, receivedMs: receivedMs,
                coveredMs: window.coveredMs, steps: window.steps, batchOrigins: index == windows.count - 1 ? origins : [])
        }
    }

    /// Closes the stretches of sensors that sent nothing for `quiet` (the strap was taken off or
    /// went out of range): their open windows are stored now rather than when it comes back.
    mutating func flush(quietFor quiet: Duration, receivedMs: Int64) -> [StoredStepRecord] {
        let now = ContinuousClock.now
        var records: [StoredStepRecord] = []
        for (sensor, entry) in counters where now - entry.lastBatch >= quiet {
            var counter = entry.counter
            records += takeRecords(of: counter.flush(), sensor: sensor, receivedMs: receivedMs)
            counters[sensor] = nil
            // What the counter did over the sensor's stretches, the stride check included (rule 9).
            Self.logger.info(
                "accelerometer steps: sensor quiet, its stretch closed",
                metadata: [
                    "sensor": "\(sensor)", "stretches": "\(counter.stretches)", "samples": "\(counter.samples)",
                    "steps": "\(counter.steps)", "stride_corrected_blocks": "\(counter.strideCorrectedBlocks)",
                    "stride_correction_steps": "\(counter.strideCorrectionSteps)",
                ])
        }
        return records
    }

    /// Every open window, at shutdown.
    mutating func flushAll(receivedMs: Int64) -> [StoredStepRecord] {
        flush(quietFor: .zero, receivedMs: receivedMs)
    }

    var isEmpty: Bool { counters.isEmpty }

    private static let logger = Logger(label: "keepalive.steps")
}
