/// The ingest journal as `status.store.journal` reports it.
public struct JournalStatus: Sendable, Equatable {
    public var enabled: Bool
    /// Windows written to the ring and not yet folded, and their rows.
    public var pendingWindows: Int
    public var pendingRows: Int
    /// Folds since start, and the rows they moved into the tables.
    public var folds: Int
    public var foldedRows: Int
}
