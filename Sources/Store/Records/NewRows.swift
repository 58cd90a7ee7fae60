/// Rows stored after a cursor, in storing order, and the cursor after them.
public struct NewRows: Sendable {
    public var rows: SampleBatch
    public var cursor: RowCursor
    /// Whether some kind had `limit` rows: there may be more to read after these.
    public var isFull: Bool

    public init(rows: SampleBatch, cursor: RowCursor, isFull: Bool) {
        self.rows = rows
        self.cursor = cursor
        self.isFull = isFull
    }

    public subscript<Kind: SampleKind>(_ kind: Kind.Type) -> [Kind.Row] { rows[kind] }

    /// Fewer than the limit of each kind: nothing more to read after these.
    public var isLast: Bool { !isFull }
}
