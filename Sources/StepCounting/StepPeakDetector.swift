/// Finds steps in a stream of acceleration magnitudes, one sample at a time, for one unbroken
/// stretch of signal (a gap or a change of rate starts a new detector).
///
/// The method (docs/steps.md): low-pass the magnitude; a step is a local maximum within
/// ±`peakHalfWindowS` (windowed peak detection, Brajdic & Harle 2013) that rises above the
/// lowest point since the previous step by an adaptive threshold — the larger of a floor and a
/// fraction of the recent steps' average rise (Zhao 2010's dynamic threshold) — and comes at
/// least `minStepIntervalS` after the previous one (else the larger of the two is kept). Steps
/// count only in runs of `stepsToStartCounting` or more with no pause over `maxStepIntervalS`
/// (Zhao's regulation, Gu et al. 2017's continuity): a run's first steps are held back until
/// it is long enough, then counted together; a run that stops short is dropped.
///
/// Two rules keep the small steps at either side of the rhythm: a peak at the time the run's
/// step interval predicts needs a lower relative threshold (`rhythmicRelativeAmplitude`), and
/// when a counted run ends, its closing step — the largest weaker peak one step interval after
/// the last — is counted (`closingStepInterval`).
///
/// Steps are given as sample times. Those before `settledBeforeMs` can no longer change; the
/// caller takes them with `takeSettledSteps()`.
struct StepPeakDetector: Sendable {
    private let parameters: StepDetectionParameters
    private let halfWindow: Int
    private let minInterval: Int
    private let maxInterval: Int
    private var lowPass: LowPassFilter
    /// The last 2·halfWindow+1 filtered samples, oldest first once full (a ring).
    private var ring: [(value: Double, timeMs: Double)] = []
    private var ringHead = 0
    private var seen = 0
    private var trough = Double.infinity
    private var lastPeak: (index: Int, value: Double, timeMs: Double)?
    private var amplitudeAverage: Double?
    /// Steps of the current run not yet counted (the run is still short).
    private var pending: [Double] = []
    private var runCounts = false
    /// Counted steps not yet taken by the caller; the last may still move (a larger peak close by).
    private var counted: [Double] = []
    /// The current run's last step intervals (samples), newest last: its rhythm.
    private var intervals: [Int] = []
    /// The largest peak since the last step that was too weak for a step but fits a closing step.
    private var closingCandidate: (timeMs: Double, rise: Double)?
    /// The time of the sample the next peak test looks at: nothing before it is undecided,
    /// except `pending` and a peak still within `minInterval` of it.
    private var centreTimeMs = -Double.infinity

    init(rateHz: Double, parameters: StepDetectionParameters) {
        self.parameters = parameters
        halfWindow = max(1, Int((parameters.peakHalfWindowS * rateHz).rounded()))
        minInterval = Int((parameters.minStepIntervalS * rateHz).rounded())
        maxInterval = Int((parameters.maxStepIntervalS * rateHz).rounded())
        lowPass = LowPassFilter(cutoffHz: parameters.lowPassHz, sampleRateHz: rateHz)
        ring.reserveCapacity(2 * halfWindow + 1)
    }

    /// The earliest time at which a step could still appear, move or vanish.
    var settledBeforeMs: Double {
        var settled = centreTimeMs
        if let first = pending.first { settled = min(settled, first) }
        if let lastPeak, seen - 1 - halfWindow - lastPeak.index < minInterval { settled = min(settled, lastPeak.timeMs) }
        // A counted run may still gain its closing step, after its last one.
        if runCounts, let lastPeak { settled = min(settled, lastPeak.timeMs + 1) }
        return settled
    }

    /// Counted steps before `settledBeforeMs`, oldest first; they are handed out once.
    mutating func takeSettledSteps() -> [Double] {
        let settled = settledBeforeMs
        let split = counted.firstIndex { $0 >= settled } ?? counted.count
        defer { counted.removeFirst(split) }
        return Array(counted[..<split])
    }

    /// At the end of the stretch: every counted step, and a short run's steps dropped.
    mutating func finish() -> [Double] {
        endRun()
        defer { counted.removeAll() }
        return counted
    }

    mutating func add(magnitude: Double, timeMs: Double) {
        let value = lowPass(magnitude)
        let size = 2 * halfWindow + 1
        if ring.count < size {
            ring.append((value, timeMs))
        } else {
            ring[ringHead] = (value, timeMs)
            ringHead = (ringHead + 1) % size
        }
        seen += 1
        guard ring.count == size else { return }
        let centre = ring[(ringHead + halfWindow) % size]
        let centreIndex = seen - 1 - halfWindow
        centreTimeMs = ring[(ringHead + halfWindow + 1) % size].timeMs
        if let lastPeak, centreIndex - lastPeak.index > maxInterval { endRun() }
        trough = min(trough, centre.value)
        guard isPeak(centre.value, size: size) else { return }
        let rise = centre.value - trough
        // Where the next step falls in units of the run's step interval (nil before two steps).
        let phase = stepInterval.map { Double(centreIndex - (lastPeak?.index ?? 0)) / $0 }
        let relative = phase.map { parameters.rhythmicInterval.contains($0) } == true
            ? parameters.rhythmicRelativeAmplitude : parameters.relativeAmplitude
        let threshold = max(parameters.minAmplitudeMilliG, relative * (amplitudeAverage ?? 0))
        guard rise >= threshold else {
            if runCounts, let phase, parameters.closingStepInterval.contains(phase),
                rise >= parameters.closingStepMinAmplitudeMilliG, rise > closingCandidate?.rise ?? -.infinity
            {
                closingCandidate = (centre.timeMs, rise)
            }
            return
        }
        accept(index: centreIndex, value: centre.value, timeMs: centre.timeMs, rise: rise)
    }

    /// The median of the run's last four step intervals, in samples.
    private var stepInterval: Double? {
        let recent = intervals.suffix(4).sorted()
        guard !recent.isEmpty else { return nil }
        let middle = recent.count / 2
        return recent.count % 2 == 1
            ? Double(recent[middle]) : Double(recent[middle - 1] + recent[middle]) / 2
    }

    /// The centre is the first largest value of the window (a plateau peaks once).
    private func isPeak(_ value: Double, size: Int) -> Bool {
        for offset in 0..<size where offset != halfWindow {
            let other = ring[(ringHead + offset) % size].value
            if offset < halfWindow ? other >= value : other > value { return false }
        }
        return true
    }

    private mutating func accept(index: Int, value: Double, timeMs: Double, rise: Double) {
        if let lastPeak, index - lastPeak.index < minInterval {
            // Two peaks within one step: the larger is the step.
            guard value > lastPeak.value else { return }
            if runCounts, counted.last == lastPeak.timeMs {
                counted[counted.count - 1] = timeMs
            } else if !runCounts, pending.last == lastPeak.timeMs {
                pending[pending.count - 1] = timeMs
            }
            if !intervals.isEmpty { intervals[intervals.count - 1] += index - lastPeak.index }
            self.lastPeak = (index, value, timeMs)
            trough = .infinity
            closingCandidate = nil
            return
        }
        amplitudeAverage = amplitudeAverage.map { $0 + parameters.amplitudeSmoothing * (rise - $0) } ?? rise
        trough = .infinity
        if let lastPeak {
            intervals.append(index - lastPeak.index)
            if intervals.count > 4 { intervals.removeFirst() }
        }
        closingCandidate = nil
        lastPeak = (index, value, timeMs)
        if runCounts {
            counted.append(timeMs)
        } else {
            pending.append(timeMs)
            if pending.count >= parameters.stepsToStartCounting {
                counted += pending
                pending.removeAll()
                runCounts = true
            }
        }
    }

    /// A pause longer than `maxStepIntervalS`, or the end of the stretch: the run is over; a
    /// counted one gains its closing step if there was one, a short one never counted.
    private mutating func endRun() {
        if runCounts, let closingCandidate { counted.append(closingCandidate.timeMs) }
        closingCandidate = nil
        intervals.removeAll()
        pending.removeAll()
        runCounts = false
        lastPeak = nil
    }
}
