import Store

/// One local day's aggregate kept current through a read-only connection: computed once, then
/// brought up to date with only the rows stored since (by row id). Today's queries use it, so
/// each answers with every row committed before it (read-your-writes) without reading the whole
/// day again.
struct RunningDay {
    private(set) var aggregate: DayAggregate
    private var cursor: RowCursor

    static let rowsPerRead = 5000

    /// Computes the day inside the caller's snapshot, so the cursor and the rows agree.
    init(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader) throws {
        cursor = try reader.rowCursor()
        aggregate = try DayAggregate.build(day, settings: settings, reader: reader)
    }

    /// Folds in the day's rows stored since the last call; false when one is older than what is
    /// already folded in (a backlog for today): then the day must be computed again.
    mutating func catchUp(reader: StoreReader) throws -> Bool {
        let bounds = aggregate.day.boundsMs
        func inDay(_ timeMs: Int64) -> Bool { bounds.start <= timeMs && timeMs < bounds.end }
        while true {
            let batch = try reader.rows(after: cursor, limit: Self.rowsPerRead)
            for fix in batch.fixes where inDay(fix.timeMs) { guard aggregate.add(fix) else { return false } }
            for sample in batch.heartRates where inDay(sample.timeMs) { guard aggregate.add(sample) else { return false } }
            for record in batch.steps where inDay(record.timeMs) { guard aggregate.add(record) else { return false } }
            cursor = batch.cursor
            if batch.isLast(limit: Self.rowsPerRead) { return true }
        }
    }
}
