/// The settings of the accelerometer step detector (docs/steps.md, "Steps from a chest strap").
/// The defaults were chosen on the Mobilise-D lower-back recordings and held up when each
/// participant was left out of the choice in turn; those of the rhythm and closing-step rules on
/// the odd-numbered GaitData subjects (the even ones held out). Change them only against
/// labelled data (scripts/steps-accuracy.py).
public struct StepDetectionParameters: Sendable, Equatable {
    /// Cut-off of the low-pass on the magnitude: walking steps are 1.5–2.2 Hz, running ≤ 3.5.
    public var lowPassHz = 2.0
    /// A peak is the largest value within this many seconds either side.
    public var peakHalfWindowS = 0.25
    /// Peaks closer than this are one step (the larger is kept): 240 steps/min at most.
    public var minStepIntervalS = 0.25
    /// A longer pause ends a run of steps.
    public var maxStepIntervalS = 2.0
    /// Steps count only once this many have come in a row, each within `maxStepIntervalS` of
    /// the one before (Zhao's "regulation", Gu et al.'s continuity): a single jolt is no walk.
    public var stepsToStartCounting = 4
    /// A peak must rise at least this far (mG) above the lowest point since the last step …
    public var minAmplitudeMilliG = 60.0
    /// … and at least this fraction of the recent steps' average rise (the adaptive threshold).
    public var relativeAmplitude = 0.25
    /// Weight of each new step in that average (exponential smoothing).
    public var amplitudeSmoothing = 0.2
    /// A peak that comes when the run's rhythm expects the next step — this fraction range of the
    /// median of the run's last four step intervals after the previous step — needs only this
    /// fraction of the recent average rise (still at least `minAmplitudeMilliG`): the periodicity
    /// test of Gu et al. (2017) used to accept a weaker step rather than to reject a stray peak.
    public var rhythmicInterval = 0.6...1.4
    public var rhythmicRelativeAmplitude = 0.12
    /// The closing step of a walk (the trailing foot brought beside the leading one as the walker
    /// stops) is a small one: when a counted run ends, the largest peak that came this fraction
    /// range of the run's step interval after its last step and rose at least
    /// `closingStepMinAmplitudeMilliG` counts as that step.
    public var closingStepInterval = 0.5...1.5
    public var closingStepMinAmplitudeMilliG = 30.0

    /// Rule 9, the stride check (`StridePeriodicityCheck`): blocks of this length of steady
    /// walking — at least `strideCheckMinSteps` steps, none over `maxStepIntervalS` apart, the
    /// first and last within `strideCheckEdgeS` of the block's ends — are judged …
    public var strideCheckBlockS = 10.0
    public var strideCheckMinSteps = 6
    public var strideCheckEdgeS = 1.5
    /// … by each axis's autocorrelation, low-passed at this cut-off, its dominant peak searched in
    /// this lag range (a step of a brisk walk to a stride of a very slow one) and believed from
    /// this correlation up; the longest such lag of the three axes is the period.
    public var strideCheckLowPassHz = 3.0
    public var strideLagS = 0.3...2.5
    public var strideCheckMinCorrelation = 0.5
    /// Counted peaks per period in these ranges fit neither one step (1), one stride (2) nor two
    /// strides (4): a weak side's steps missed part of the time, or an extra peak a stride. The
    /// block then counts two steps per period.
    public var strideCheckMissedPeaks = 1.2...1.75
    public var strideCheckExtraPeaks = 2.25...3.5

    public init() {}
}
