/// What `Store.reopen` carried from the old file into the new one.
public struct StoreReopened: Sendable, Equatable {
    public var problem: StoreFileProblem
    /// Where a damaged replacement was moved to.
    public var movedAside: String?
    public var outboxMessages = 0
    public var dayAggregates = 0
    public var fixes = 0
    public var heartRates = 0
    public var stepRecords = 0
}
