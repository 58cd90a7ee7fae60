/// What saving a workout did: a new row, a changed one, or nothing. The version is 0 while a
/// workout goes on, 1 once it has finished, and goes up each time a finished one changes.
public enum WorkoutSaveOutcome: Sendable, Equatable {
    case inserted(version: Int)
    case updated(version: Int)
    case unchanged(version: Int)

    public var version: Int {
        switch self {
        case .inserted(let version), .updated(let version), .unchanged(let version): version
        }
    }
}
