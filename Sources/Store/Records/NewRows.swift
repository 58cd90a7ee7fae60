/// Rows stored after a cursor, in storing order, and the cursor after them.
public struct NewRows: Sendable {
    public var fixes: [StoredFix]
    public var heartRates: [StoredHeartRate]
    public var steps: [StoredStepRecord]
    public var cursor: RowCursor

    public init(fixes: [StoredFix], heartRates: [StoredHeartRate], steps: [StoredStepRecord] = [], cursor: RowCursor) {
        self.fixes = fixes
        self.heartRates = heartRates
        self.steps = steps
        self.cursor = cursor
    }

    /// Fewer than `limit` of each kind: nothing more to read after these.
    public func isLast(limit: Int) -> Bool { fixes.count < limit && heartRates.count < limit && steps.count < limit }
}
