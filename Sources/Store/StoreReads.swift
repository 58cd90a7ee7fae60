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
        var cursor = RowCursor()
        for table in KindTable.all {
            let statement = try db.statement(sql: table.newestID)
            defer { statement.reset() }
            cursor[name: table.kind.name] = try statement.step() ? statement.int64(0) : 0
        }
        return cursor
    }

    /// Rows stored after `cursor`, in the order they were stored (not time order: a bridge
    /// backlog arrives late), at most `limit` of each kind, and the cursor after them. This is
    /// how the running day aggregates see new data without reading the day again.
    public func rows(after cursor: RowCursor, limit: Int) throws -> NewRows {
        var next = cursor
        var rows = SampleBatch()
        var isFull = false
        // Ids are only handed out upwards while rows exist; an emptied table starts again at 1.
        let current = try rowCursor()
        for kind in SampleKinds.all {
            if current[name: kind.name] < next[name: kind.name] { next[name: kind.name] = 0 }
            let read = try rowsOf(kind, after: next[name: kind.name], limit: limit)
            rows.set(read.rows)
            if read.rows.count >= limit { isFull = true }
            if let last = read.lastID { next[name: kind.name] = last }
        }
        return NewRows(rows: rows, cursor: next, isFull: isFull)
    }

    private func rowsOf<Kind: SampleKind>(_ kind: Kind.Type, after id: Int64, limit: Int) throws -> (rows: any SampleRows, lastID: Int64?) {
        var rows: [Kind.Row] = []
        var lastID: Int64?
        try Kind.forEach(afterID: id, limit: limit, in: db) { row, id in
            rows.append(row)
            lastID = id
        }
        return (KindRows<Kind>(rows: rows), lastID)
    }

    /// The time span of the rows stored after `cursor` (any kind), nil when there are none:
    /// which days a batch of new rows touched. Row-id range scans.
    public func span(ofRowsAfter cursor: RowCursor) throws -> (fromMs: Int64, toMs: Int64)? {
        var span: (fromMs: Int64, toMs: Int64)?
        for table in KindTable.all {
            let statement = try db.statement(sql: table.spanAfterID).bind(.integer(cursor[name: table.kind.name]))
            defer { statement.reset() }
            guard try statement.step(), !statement.isNull(0) else { continue }
            let (from, to) = (statement.int64(0), statement.int64(1))
            span = (min(span?.fromMs ?? from, from), max(span?.toMs ?? to, to))
        }
        return span
    }

    /// Whether any row of any kind lies in `[fromMs, toMs)`.
    public func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool {
        for table in KindTable.all {
            let statement = try db.statement(sql: table.anyInTime).bind(.integer(fromMs), .integer(toMs))
            defer { statement.reset() }
            if try statement.step(), statement.int(0) != 0 { return true }
        }
        return false
    }
}
