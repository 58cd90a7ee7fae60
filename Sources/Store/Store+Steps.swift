/// Step records (schema 5): a foot pod's RSC notifications and the accelerometer's step windows.
extension Store {
    /// The new record's id, or nil for a duplicate (same sensor, kind and time, or origin: a replay).
    func insert(_ record: StoredStepRecord) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO step_record (sensor, kind, ts_ms, received_ms, raw, end_ms, covered_ms, steps, origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .text(record.sensor), .text(record.kind.rawValue), .integer(record.timeMs), .integer(record.receivedMs),
            record.kind == .rsc ? .blob(record.raw) : nil, record.endMs.map { .integer($0) },
            record.coveredMs.map { .integer($0) }, .int(record.steps), record.origin.map { .integer($0) }
        ).run()
        return db.changes > 0 ? db.lastInsertRowID : nil
    }

    /// Step records with `fromMs <= ts_ms < toMs`, in time order, streamed.
    public func forEachStepRecord(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredStepRecord) throws -> Void
    ) throws {
        if cursor == nil { foldForReaders() }
        try db.forEachStepRecord(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    public func stepRecords(fromMs: Int64, toMs: Int64) throws -> [StoredStepRecord] {
        var records: [StoredStepRecord] = []
        try forEachStepRecord(fromMs: fromMs, toMs: toMs) { records.append($0) }
        return records
    }
}
