import SensorBridge
/// Steps counted in one short window of time from a chest strap's accelerometer: what the agent
/// stores instead of the raw stream. Always an estimate (docs/steps.md gives its accuracy).
public struct StepWindow: Sendable, Equatable {
    /// Start of the window on the epoch grid of the window length, ms.
    public var startMs: Int64
    /// The first and last sample time of this stretch of signal within the window, ms; with
    /// the sensor, `firstSampleMs` identifies the record (a window cut by a gap in the signal
    /// gives two records, one per side; they add up).
    public var firstSampleMs: Int64
    public var lastSampleMs: Int64
    /// Time covered by samples (one sample period each), ms.
    public var coveredMs: Int64
    public var steps: Int
    /// Always true: these steps are estimated from acceleration, not counted by a sensor.
    public var estimated: Bool { true }

    public init(startMs: Int64, firstSampleMs: Int64, lastSampleMs: Int64, coveredMs: Int64, steps: Int) {
        self.startMs = startMs
        self.firstSampleMs = firstSampleMs
        self.lastSampleMs = lastSampleMs
        self.coveredMs = coveredMs
        self.steps = steps
    }
}

/// Counts steps in one sensor's accelerometer batches (`pmd_acc`), batch by batch, and hands
/// out per-window counts once no later sample can change them.
///
/// Batches must follow one another: a batch that starts within `toleranceMs` of where the
/// previous one ended continues the signal (the detector's state carries over, so a step across
/// the seam is found once); one that starts later, or at another rate, ends the stretch (its
/// windows are closed, a short run of steps at its end dropped) and starts a new one; one that
/// starts earlier overlaps what was counted and is refused (a replay), changing nothing.
public struct AccelerationStepCounter: Sendable {
    public let windowMs: Int64
    public let toleranceMs: Double
    public let parameters: StepDetectionParameters

    /// Stretches of signal started (the first, and one after each gap or rate change).
    public private(set) var stretches = 0
    public private(set) var samples = 0
    public private(set) var steps = 0

    private var detector: StepPeakDetector?
    private var strideCheck: StridePeriodicityCheck?
    /// Blocks of steady walking whose count was replaced by two steps a stride (rule 9), and the
    /// steps that changed in all (negative when peaks were extra).
    public var strideCorrectedBlocks: Int { endedStretches.correctedBlocks + (strideCheck?.correctedBlocks ?? 0) }
    public var strideCorrectionSteps: Int { endedStretches.correctionSteps + (strideCheck?.correctionSteps ?? 0) }
    private var endedStretches = (correctedBlocks: 0, correctionSteps: 0)
    private var rateHz = 0.0
    /// Where the next contiguous batch should start, ms.
    private var nextSampleMs = 0.0
    /// Windows of the current stretch not handed out yet, by start.
    private var open: [Int64: StepWindow] = [:]

    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case empty
        case badRate(Double)
        /// The batch starts this many ms before the previous one ended.
        case overlaps(ms: Double)
        /// The same batch as one counted (same `seq`, stamp and samples), seen by the agent,
        /// which alone knows what the bridge sent (`BridgeOrigin`).
        case replayed

        public var description: String {
            switch self {
            case .empty: "no samples"
            case .badRate(let rate): "rate \(rate) Hz outside \(AccelerationBatch.rateRange)"
            case .overlaps(let ms): "starts \(Int(ms.rounded())) ms before the previous batch ended (replayed?)"
            case .replayed: "the same seq, stamp and samples as a batch counted: a replay"
            }
        }
    }

    public init(windowMs: Int64 = 60_000, toleranceMs: Double = 250, parameters: StepDetectionParameters = .init()) {
        precondition(windowMs > 0, "window length must be positive")
        self.windowMs = windowMs
        self.toleranceMs = toleranceMs
        self.parameters = parameters
    }

    /// Adds a batch whose first sample was taken at `firstSampleMs`; returns the windows that
    /// closed (oldest first), or why the batch was refused.
    public mutating func add(_ batch: AccelerationBatch, firstSampleMs: Int64) -> Result<[StepWindow], Refusal> {
        guard !batch.samples.isEmpty else { return .failure(.empty) }
        guard AccelerationBatch.rateRange.contains(batch.rateHz) else { return .failure(.badRate(batch.rateHz)) }
        var closed: [StepWindow] = []
        var start = Double(firstSampleMs)
        if detector != nil {
            let offset = start - nextSampleMs
            if offset < -toleranceMs { return .failure(.overlaps(ms: -offset)) }
            if offset > toleranceMs || batch.rateHz != rateHz {
                closed = flush()
            } else {
                // Continue the signal where it left off; the bridge's clock only places it.
                start = max(start, nextSampleMs)
            }
        }
        if detector == nil {
            detector = StepPeakDetector(rateHz: batch.rateHz, parameters: parameters)
            strideCheck = StridePeriodicityCheck(rateHz: batch.rateHz, startMs: start, parameters: parameters)
            rateHz = batch.rateHz
            stretches += 1
        }
        let periodMs = 1000 / batch.rateHz
        for (index, sample) in batch.samples.enumerated() {
            let timeMs = start + Double(index) * periodMs
            detector?.add(magnitude: sample.magnitude, timeMs: timeMs)
            strideCheck?.add(sample)
            cover(timeMs: timeMs, periodMs: periodMs)
        }
        samples += batch.samples.count
        nextSampleMs = start + Double(batch.samples.count) * periodMs
        if var detector, var strideCheck {
            let settled = detector.takeSettledSteps()
            record(strideCheck.take(settledSteps: settled, detectorSettledMs: detector.settledBeforeMs, sampledUntilMs: nextSampleMs))
            closed += close(before: min(detector.settledBeforeMs, strideCheck.settledBeforeMs))
            self.detector = detector
            self.strideCheck = strideCheck
        }
        return .success(closed)
    }

    /// Ends the current stretch (the stream stopped or the sensor went away): every open window
    /// is handed out; a run of steps too short to count is dropped.
    public mutating func flush() -> [StepWindow] {
        guard var detector, var strideCheck else { return [] }
        record(strideCheck.finish(remainingSteps: detector.finish()))
        endedStretches.correctedBlocks += strideCheck.correctedBlocks
        endedStretches.correctionSteps += strideCheck.correctionSteps
        self.detector = nil
        self.strideCheck = nil
        return close(before: .infinity)
    }

    private mutating func cover(timeMs: Double, periodMs: Double) {
        let time = Int64(timeMs.rounded(.down))
        let start = gridStart(time, length: windowMs)
        if var window = open[start] {
            window.lastSampleMs = time
            window.coveredMs = Int64((timeMs + periodMs - Double(window.firstSampleMs)).rounded())
            open[start] = window
        } else {
            open[start] = StepWindow(
                startMs: start, firstSampleMs: time, lastSampleMs: time, coveredMs: Int64(periodMs.rounded()), steps: 0)
        }
    }

    private mutating func record(_ stepTimes: [Double]) {
        for timeMs in stepTimes {
            let start = gridStart(Int64(timeMs.rounded(.down)), length: windowMs)
            open[start]?.steps += 1
            steps += 1
        }
    }

    /// Hands out the windows that end at or before `limitMs`, oldest first.
    private mutating func close(before limitMs: Double) -> [StepWindow] {
        let done = open.keys.filter { Double($0 + windowMs) <= limitMs }.sorted()
        return done.compactMap { open.removeValue(forKey: $0) }
    }
}
