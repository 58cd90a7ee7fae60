/// How a workout began (`source` in docs/contract.md, "Workouts"): found by the detector, or
/// started and stopped by the person (`workout start`/`stop`), which the detector then leaves alone.
enum WorkoutSource: String, Sendable {
    case auto, manual
}
