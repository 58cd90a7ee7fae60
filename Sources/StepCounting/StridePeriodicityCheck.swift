import SensorBridge
/// Checks the peak detector's steps against the stride periodicity of the trunk signal, block by
/// block, and counts two steps a stride where the peaks do not fit it (docs/steps.md, rule 9).
///
/// Trunk acceleration repeats once per stride (two steps): the mediolateral sway always does, the
/// vertical and anteroposterior signals do too, and in symmetric gait they also repeat every step
/// (Zijlstra & Hof 2003). The autocorrelation shows it: its dominant peaks are at the step and
/// the stride lag (Moe-Nilssen & Helbostad 2004, who read cadence off the stride lag). So in a
/// block of steady walking, the longest lag at which one of the three axes has its dominant
/// autocorrelation peak is a step, a stride or two strides, and the peaks counted per such period
/// are about 1, 2 or 4. When they are clearly none of these — between 1 and 2 (one side's weak
/// steps found only part of the time, as in hemiparetic gait) or about 3 (an extra peak each
/// stride) — the peaks are not the steps, and the block counts two steps per period instead.
///
/// The detector's settled steps pass through here; a block's steps are handed out once the block
/// is over, so windows close up to one block later than the detector alone would allow.
struct StridePeriodicityCheck: Sendable {
    private let parameters: StepDetectionParameters
    private let rateHz: Double
    private let blockMs: Double
    private var blockStartMs: Double
    /// The samples from the current block's start on, per axis (the next block's first ones too,
    /// while the detector has not yet settled the current block's steps).
    private var axes: [[Double]] = [[], [], []]
    /// Steps the detector has settled and this check not yet handed out, oldest first.
    private var steps: [Double] = []
    /// Blocks whose count was replaced (the stride's), and the steps that added (may be negative).
    private(set) var correctedBlocks = 0
    private(set) var correctionSteps = 0

    init(rateHz: Double, startMs: Double, parameters: StepDetectionParameters) {
        self.parameters = parameters
        self.rateHz = rateHz
        blockMs = parameters.strideCheckBlockS * 1000
        blockStartMs = startMs
    }

    /// Nothing before this can change any more.
    var settledBeforeMs: Double { blockStartMs }

    /// Adds the next sample of the stretch (evenly spaced, from `startMs` on).
    mutating func add(_ sample: AccelerationSample) {
        axes[0].append(Double(sample.x))
        axes[1].append(Double(sample.y))
        axes[2].append(Double(sample.z))
    }

    /// Takes the detector's newly settled steps and hands out the steps of every block that is
    /// over (its samples all in, its steps settled by the detector), oldest first.
    mutating func take(settledSteps: [Double], detectorSettledMs: Double, sampledUntilMs: Double) -> [Double] {
        steps += settledSteps
        var out: [Double] = []
        while blockStartMs + blockMs <= min(detectorSettledMs, sampledUntilMs) {
            out += closeBlock()
        }
        return out
    }

    /// At the end of the stretch: the rest, unchanged (a partial block is not judged).
    mutating func finish(remainingSteps: [Double]) -> [Double] {
        steps += remainingSteps
        let out = steps
        steps.removeAll()
        for index in axes.indices { axes[index].removeAll() }
        return out
    }

    private mutating func closeBlock() -> [Double] {
        let end = blockStartMs + blockMs
        let split = steps.firstIndex { $0 >= end } ?? steps.count
        let blockSteps = Array(steps[..<split])
        steps.removeFirst(split)
        let count = Int((blockMs / 1000 * rateHz).rounded())
        let block = axes.map { Array($0.prefix(count)) }
        for index in axes.indices { axes[index].removeFirst(min(count, axes[index].count)) }
        defer { blockStartMs = end }
        guard let period = stridePeriod(block, steps: blockSteps, startMs: blockStartMs) else { return blockSteps }
        let stepsInBlock = Int((2 * blockMs / period).rounded())
        correctedBlocks += 1
        correctionSteps += stepsInBlock - blockSteps.count
        // Spread evenly over the block: what matters downstream is the window each falls in.
        return (0..<stepsInBlock).map { blockStartMs + (Double($0) + 0.5) * blockMs / Double(stepsInBlock) }
    }

    /// The stride period (ms) to count by, or nil when the block's peaks fit the periodicity, the
    /// block is not steady walking, or no axis is periodic enough to judge by.
    private func stridePeriod(_ block: [[Double]], steps: [Double], startMs: Double) -> Double? {
        let edgeMs = parameters.strideCheckEdgeS * 1000
        guard steps.count >= parameters.strideCheckMinSteps, let first = steps.first, let last = steps.last,
            first - startMs < edgeMs, startMs + blockMs - last < edgeMs,
            zip(steps, steps.dropFirst()).allSatisfy({ $1 - $0 < parameters.maxStepIntervalS * 1000 })
        else { return nil }
        var longestLag: Int?
        for axis in block {
            guard let peak = dominantAutocorrelationPeak(axis), peak.value >= parameters.strideCheckMinCorrelation
            else { continue }
            longestLag = max(longestLag ?? 0, peak.lag)
        }
        guard let longestLag else { return nil }
        let periodMs = Double(longestLag) / rateHz * 1000
        let meanIntervalMs = (last - first) / Double(steps.count - 1)
        let peaksPerPeriod = periodMs / meanIntervalMs
        let misfit = parameters.strideCheckMissedPeaks.contains(peaksPerPeriod)
            || parameters.strideCheckExtraPeaks.contains(peaksPerPeriod)
        return misfit ? periodMs : nil
    }

    /// The highest local maximum of the low-passed axis's autocorrelation (mean removed,
    /// normalised by lag 0) within the stride lag range.
    private func dominantAutocorrelationPeak(_ raw: [Double]) -> (lag: Int, value: Double)? {
        var filter = LowPassFilter(cutoffHz: parameters.strideCheckLowPassHz, sampleRateHz: rateHz)
        let filtered = raw.map { filter($0) }
        let mean = filtered.reduce(0, +) / Double(max(1, filtered.count))
        let x = filtered.map { $0 - mean }
        let energy = x.reduce(0) { $0 + $1 * $1 }
        guard energy > 0 else { return nil }
        let low = Int((parameters.strideLagS.lowerBound * rateHz).rounded())
        let high = min(Int((parameters.strideLagS.upperBound * rateHz).rounded()), x.count - 2)
        guard low >= 1, high > low else { return nil }
        func r(_ lag: Int) -> Double {
            var sum = 0.0
            for index in 0..<(x.count - lag) { sum += x[index] * x[index + lag] }
            return sum / energy
        }
        var previous = r(low - 1), current = r(low)
        var best: (lag: Int, value: Double)?
        for lag in low..<high {
            let next = r(lag + 1)
            if current > previous, current >= next, current > best?.value ?? -.infinity { best = (lag, current) }
            (previous, current) = (current, next)
        }
        return best
    }
}
