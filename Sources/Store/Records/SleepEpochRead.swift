/// The kept epochs of one sensor in a time range, by start; rows failing their check are left out
/// and counted (the caller computes them again and logs the count).
public struct SleepEpochRead: Sendable {
    public var epochs: [Int64: StoredSleepEpoch]
    public var failedCheck: Int
}
