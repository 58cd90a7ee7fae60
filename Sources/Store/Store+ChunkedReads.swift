/// A day's heart-rate rows read in bounded chunks, each one hop onto the store actor: between
/// chunks the actor serves the others waiting for it (a query's journal fold, the sample writer),
/// instead of holding them for the whole day (issue 32: a 100 000-notification day kept a query
/// waiting seconds behind the publisher's read of it).
extension Store {
    /// One chunk: notifications with `fromMs <= ts_ms < toMs` after `key` (time, then sensor) in
    /// that order, at most `limit`, stored up to `cursor`.
    public func heartRates(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor?, after key: (timeMs: Int64, sensor: String)?, limit: Int
    ) throws -> [StoredHeartRate] {
        if cursor == nil, key == nil { foldForReaders() }
        return try db.heartRates(fromMs: fromMs, toMs: toMs, upTo: cursor, after: key, limit: limit)
    }

    static let rowsPerChunk = 2000

    /// `forEachHeartRate` in chunks of `rowsPerChunk` rows (see the extension's comment).
    public nonisolated func forEachHeartRateInChunks(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor?, _ body: (StoredHeartRate) throws -> Void
    ) async throws {
        var key: (timeMs: Int64, sensor: String)?
        while true {
            let chunk = try await heartRates(fromMs: fromMs, toMs: toMs, upTo: cursor, after: key, limit: Self.rowsPerChunk)
            for sample in chunk { try body(sample) }
            guard chunk.count == Self.rowsPerChunk, let last = chunk.last else { return }
            key = (last.timeMs, last.sensor)
        }
    }
}

extension SQLiteConnection {
    func heartRates(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor?, after key: (timeMs: Int64, sensor: String)?, limit: Int
    ) throws -> [StoredHeartRate] {
        let statement = try self.statement(sql: Self.heartRatesAfterKey).bind(
            .integer(key?.timeMs ?? fromMs), .text(key?.sensor ?? ""), .integer(key == nil ? 1 : 0), .integer(fromMs),
            .integer(toMs), .integer(cursor?.heartRateID ?? .max), .integer(Int64(limit)))
        defer { statement.reset() }
        let columns = try statement.layout(StoredHeartRate.Columns.self)
        var rows: [StoredHeartRate] = []
        while try statement.step() { rows.append(columns.heartRate(statement)) }
        return rows
    }

    /// Keyset pagination on (ts_ms, sensor), the table's order and unique key; the first chunk
    /// (?3 = 1) starts at `fromMs` itself.
    private static let heartRatesAfterKey = """
        SELECT \(StoredHeartRate.selection)
        FROM hr_sample s
        WHERE (s.ts_ms > ?1 OR (s.ts_ms = ?1 AND (?3 = 1 OR s.sensor > ?2))) AND s.ts_ms >= ?4 AND s.ts_ms < ?5 AND s.id <= ?6
        ORDER BY s.ts_ms, s.sensor LIMIT ?7
        """
}
