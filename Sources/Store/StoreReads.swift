/// The store's domain reads over one connection: the queries the `Store` actor (its writer
/// connection) and `StoreReader` (a read-only connection) both run, kept off the generic SQLite
/// wrapper. Each concern is an extension in a file of its own: StoreReads+Samples (raw rows by
/// time and by id), StoreReads+Summaries (a day's fix ends, slots and heart-rate means for
/// queries), StoreReads+Days (day aggregates, folds, sleep nights and epochs), StoreReads+Workouts
/// (workouts and gear). Reached through `StoreReading.read`. This file: where the newest rows
/// are, and what came after a cursor.
///
/// Not thread-safe, like its connection: used by the connection's owner, in one place at a time.
public struct StoreReads {
    let db: SQLiteConnection

    init(_ db: SQLiteConnection) { self.db = db }

    /// Where the newest stored rows are: what `rows(after:)` continues from. On the writer, rows
    /// still in the ingest journal come after it: they are seen once folded, within `[store] fold_s`.
    public func rowCursor() throws -> RowCursor {
        RowCursor(
            fixID: try db.scalarInt("SELECT coalesce(max(id), 0) FROM fix") ?? 0,
            heartRateID: try db.scalarInt("SELECT coalesce(max(id), 0) FROM hr_sample") ?? 0,
            stepID: try db.scalarInt("SELECT coalesce(max(id), 0) FROM step_record") ?? 0)
    }

    /// Rows stored after `cursor`, in the order they were stored (not time order: a bridge
    /// backlog arrives late), at most `limit` of each kind, and the cursor after them. This is
    /// how the running day aggregates see new data without reading the day again.
    public func rows(after cursor: RowCursor, limit: Int) throws -> NewRows {
        var next = cursor
        // Ids are only handed out upwards while rows exist; an emptied table starts again at 1.
        let current = try rowCursor()
        if current.fixID < next.fixID { next.fixID = 0 }
        if current.heartRateID < next.heartRateID { next.heartRateID = 0 }
        if current.stepID < next.stepID { next.stepID = 0 }
        let fixStatement = try db.statement(sql: StoredFix.afterID).bind(.integer(next.fixID), .integer(Int64(limit)))
        defer { fixStatement.reset() }
        let fixColumns = try fixStatement.layout(StoredFix.Columns.self)
        var fixes: [StoredFix] = []
        while try fixStatement.step() {
            fixes.append(fixColumns.fix(fixStatement))
            next.fixID = fixColumns.id(fixStatement)
        }
        var heartRates: [StoredHeartRate] = []
        try self.heartRates(afterID: next.heartRateID, limit: limit) { sample, id in
            heartRates.append(sample)
            next.heartRateID = id
        }
        let stepStatement = try db.statement(sql: StoredStepRecord.afterID).bind(.integer(next.stepID), .integer(Int64(limit)))
        defer { stepStatement.reset() }
        let stepColumns = try stepStatement.layout(StoredStepRecord.Columns.self)
        var steps: [StoredStepRecord] = []
        while try stepStatement.step() {
            steps.append(stepColumns.stepRecord(stepStatement))
            next.stepID = stepColumns.id(stepStatement)
        }
        return NewRows(fixes: fixes, heartRates: heartRates, steps: steps, cursor: next)
    }

    /// The time span of the rows stored after `cursor` (fixes, notifications, step records), nil
    /// when there are none: which days a batch of new rows touched. Row-id range scans.
    public func span(ofRowsAfter cursor: RowCursor) throws -> (fromMs: Int64, toMs: Int64)? {
        var span: (fromMs: Int64, toMs: Int64)?
        for (sql, id): (StaticString, Int64) in [
            ("SELECT min(ts_ms), max(ts_ms) FROM fix WHERE id > ?", cursor.fixID),
            ("SELECT min(ts_ms), max(ts_ms) FROM hr_sample WHERE id > ?", cursor.heartRateID),
            ("SELECT min(ts_ms), max(ts_ms) FROM step_record WHERE id > ?", cursor.stepID),
        ] {
            let statement = try db.statement(sql).bind(.integer(id))
            defer { statement.reset() }
            guard try statement.step(), !statement.isNull(0) else { continue }
            let (from, to) = (statement.int64(0), statement.int64(1))
            span = (min(span?.fromMs ?? from, from), max(span?.toMs ?? to, to))
        }
        return span
    }

    /// Whether any fix, heart-rate notification or step record lies in `[fromMs, toMs)`.
    public func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool {
        for sql: StaticString in [
            "SELECT EXISTS (SELECT 1 FROM fix WHERE ts_ms >= ? AND ts_ms < ?)",
            "SELECT EXISTS (SELECT 1 FROM hr_sample WHERE ts_ms >= ? AND ts_ms < ?)",
            "SELECT EXISTS (SELECT 1 FROM step_record WHERE ts_ms >= ? AND ts_ms < ?)",
        ] {
            let statement = try db.statement(sql).bind(.integer(fromMs), .integer(toMs))
            defer { statement.reset() }
            if try statement.step(), statement.int(0) != 0 { return true }
        }
        return false
    }
}
