/// The queries the store runs on every kind's table alike (its `id` and `ts_ms`), composed once
/// per kind: the cursor and the new rows' span are read every few seconds, and building their
/// SQL text each time would be work on that path for nothing.
struct KindTable: Sendable {
    let kind: any SampleKind.Type
    /// The newest row id (0 for an empty table).
    let newestID: String
    /// `min(ts_ms), max(ts_ms)` of the rows after an id.
    let spanAfterID: String
    /// Whether a row lies in `[?, ?)`.
    let anyInTime: String
    /// Deletes up to `?2` rows older than `?1`, oldest first (retention).
    let pruneBefore: String

    init(_ kind: any SampleKind.Type) {
        self.kind = kind
        let table = kind.table
        newestID = "SELECT coalesce(max(id), 0) FROM \(table)"
        spanAfterID = "SELECT min(ts_ms), max(ts_ms) FROM \(table) WHERE id > ?"
        anyInTime = "SELECT EXISTS (SELECT 1 FROM \(table) WHERE ts_ms >= ? AND ts_ms < ?)"
        pruneBefore = "DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE ts_ms < ? ORDER BY ts_ms LIMIT ?)"
    }

    /// Every kind's, in `SampleKinds.all` order.
    static let all = SampleKinds.all.map(KindTable.init)
}
