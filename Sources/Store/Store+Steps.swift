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

    /// The origins of the accelerometer batches lately counted at their receive time, newest
    /// last, at most `perSensor` of each sensor: what `AccelerometerStepWindows` remembered
    /// before the agent stopped. Read from the newest `scannedRows` step records only (a row-id
    /// range, whatever else the table holds), so a start costs the same on a year-old file.
    public func recentAccelerometerOrigins(perSensor: Int, scannedRows: Int = 20_000) throws -> [String: [Int64]] {
        foldForReaders()
        let statement = try db.statement(
            """
            SELECT sensor, raw FROM step_record
            WHERE id > (SELECT coalesce(max(id), 0) FROM step_record) - ? AND kind = 'acc' AND raw IS NOT NULL
            ORDER BY id DESC
            """
        ).bind(.integer(Int64(scannedRows)))
        defer { statement.reset() }
        var newestFirst: [String: [Int64]] = [:]
        while try statement.step() {
            let sensor = statement.text(0)
            guard newestFirst[sensor, default: []].count < perSensor else { continue }
            let room = perSensor - newestFirst[sensor, default: []].count
            newestFirst[sensor, default: []] += StoredStepRecord.origins(packed: statement.blob(1)).reversed().prefix(room)
        }
        return newestFirst.mapValues { $0.reversed() }
    }
}
