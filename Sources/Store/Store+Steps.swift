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
            record.kind == .rsc || !record.raw.isEmpty ? .blob(record.raw) : nil, record.endMs.map { .integer($0) },
            record.coveredMs.map { .integer($0) }, .int(record.steps), record.origin.map { .integer($0) }
        ).run()
        return db.changes > 0 ? db.lastInsertRowID : nil
    }
}
