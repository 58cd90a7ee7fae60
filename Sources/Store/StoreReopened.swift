/// What `Store.reopen` carried from the old file into the new one.
public struct StoreReopened: Sendable, Equatable {
    public var problem: StoreFileProblem
    /// Where a damaged replacement was moved to.
    public var movedAside: String?
    public var outboxMessages = 0
    public var dayAggregates = 0
    /// Raw rows carried, by what a kind's rows are called (`SampleKind.rowsName`).
    public var rowsCarried: [String: Int] = [:]
}
