/// What crediting a workout did.
public enum GearCreditOutcome: Sendable, Equatable {
    /// First credit of this workout.
    case credited
    /// It was credited to another pair (`from`) and now to this one.
    case moved(from: String)
    /// Already credited to this pair; only its distance changed (a re-detected workout).
    case distanceChanged
    /// Already credited to this pair with this distance: a replay.
    case unchanged
}
