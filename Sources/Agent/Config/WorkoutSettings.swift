/// How workouts are found and what they are credited to: `[workouts]` and `[gear]`
/// (docs/health.md, "Workouts", gives each rule its source).
struct WorkoutSettings: Sendable, Equatable {
    var enabled = true
    /// Moving without a pause this long starts a workout (and it starts where the moving began).
    var startMovingS = 60.0
    /// Moving: at least `pauseDistanceM` covered in the last `pauseWindowS` (below it: paused).
    var pauseDistanceM = 5.0
    var pauseWindowS = 10.0
    /// Paused this long ends the workout, at its last moving moment.
    var endPauseS = 300.0
    /// A data gap up to this long between two moving fixes is moving (a tunnel, a lost fix); two
    /// workouts closer than this are one.
    var mergeGapS = 120.0
    /// Shorter or nearer workouts are dropped, unless started by command.
    var minDurationS = 600.0
    var minDistanceM = 500.0
    /// Heart rate above resting + this fraction of the reserve, reached with a rise of at
    /// least `heartRateRiseBpm` within the 5 minutes before, also starts one.
    var heartRateReserveFraction = 0.45
    var heartRateRiseBpm = 15.0
    /// Sport from the median moving speed (m/s) and, when a step sensor gave it, cadence.
    var walkMaxMps = 2.0
    var runMaxMps = 5.5
    var runMinCadence = 130.0
    /// Faster than this on average is a vehicle, not a workout.
    var vehicleMinMps = 12.0
    /// Banister's TRIMP weighting: "male" (0.64 e^1.92x) or "female" (0.86 e^1.67x).
    var trimpWeighting: TrimpWeighting = .male
    /// `[gear] auto_credit`: each finished run goes to the selected pair.
    var autoCredit = true

    enum TrimpWeighting: String, Sendable, CaseIterable {
        case male, female
    }

    var startMovingMs: Int64 { Int64(startMovingS * 1000) }
    var pauseWindowMs: Int64 { Int64(pauseWindowS * 1000) }
    var endPauseMs: Int64 { Int64(endPauseS * 1000) }
    var mergeGapMs: Int64 { Int64(mergeGapS * 1000) }
}
