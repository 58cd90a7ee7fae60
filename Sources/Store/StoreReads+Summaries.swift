/// Reads that answer a query without reading every row: the ends of a day's fixes, one fix per
/// map slot, heart-rate means per bucket, the newest GPS-timed fix.
extension StoreReads {
    /// The newest fix stamped with GPS time, by the order fixes were stored (the last few
    /// thousand are looked at: a seek, not a scan).
    public func newestGPSTimedFix() throws -> StoredFix? {
        let statement = try db.statement(sql: Self.newestGPSTimedFix)
        defer { statement.reset() }
        return try statement.step() ? statement.layout(StoredFix.Columns.self).fix(statement) : nil
    }

    private static let newestGPSTimedFix = """
        SELECT \(StoredFix.selection) FROM fix
        WHERE id > (SELECT coalesce(max(id), 0) - 5000 FROM fix) AND time_source = 'gps' ORDER BY id DESC LIMIT 1
        """

    /// The first and last fix in `[fromMs, toMs)`: two index seeks.
    public func fixEnds(fromMs: Int64, toMs: Int64) throws -> (first: StoredFix?, last: StoredFix?) {
        var first: StoredFix?
        var last: StoredFix?
        let firstStatement = try db.statement(sql: Self.firstFix).bind(.integer(fromMs), .integer(toMs))
        defer { firstStatement.reset() }
        if try firstStatement.step() { first = try firstStatement.layout(StoredFix.Columns.self).fix(firstStatement) }
        let lastStatement = try db.statement(sql: Self.lastFix).bind(.integer(fromMs), .integer(toMs))
        defer { lastStatement.reset() }
        if try lastStatement.step() { last = try lastStatement.layout(StoredFix.Columns.self).fix(lastStatement) }
        return (first, last)
    }

    private static let firstFix = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms LIMIT 1"
    private static let lastFix = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms DESC LIMIT 1"

    /// The first fix of every `slotMs` slot in `[fromMs, toMs)`, in time order.
    public func firstFixPerSlot(fromMs: Int64, toMs: Int64, slotMs: Int64, _ body: (StoredFix) throws -> Void) throws {
        let statement = try db.statement(sql: Self.firstFixPerSlot).bind(.integer(fromMs), .integer(toMs), .integer(max(slotMs, 1)))
        defer { statement.reset() }
        let columns = try statement.layout(StoredFix.Columns.self)
        while try statement.step() { try body(columns.fix(statement)) }
    }

    /// SQLite takes the bare columns of an aggregate query from the row that gave min(): the
    /// selection's own `ts_ms` among them, so it is the minimum.
    private static let firstFixPerSlot = """
        SELECT min(ts_ms), \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? GROUP BY ts_ms / ? ORDER BY 1
        """

    /// Valid heart-rate samples in `[fromMs, toMs)` as (time, bpm), in time order.
    public func forEachValidHeartRate(fromMs: Int64, toMs: Int64, _ body: (Int64, Int) throws -> Void) throws {
        let statement = try db.statement(
            "SELECT ts_ms, bpm FROM hr_sample WHERE ts_ms >= ? AND ts_ms < ? AND valid = 1 ORDER BY ts_ms"
        ).bind(.integer(fromMs), .integer(toMs))
        defer { statement.reset() }
        while try statement.step() { try body(statement.int64(0), statement.int(1)) }
    }

    /// The mean of the valid samples of every `bucketMs` in `[fromMs, toMs)`: (bucket start, mean).
    public func heartRateMeans(fromMs: Int64, toMs: Int64, bucketMs: Int64, _ body: (Int64, Double) throws -> Void) throws {
        let statement = try db.statement(
            """
            SELECT (ts_ms / ?1) * ?1, avg(bpm) FROM hr_sample WHERE ts_ms >= ?2 AND ts_ms < ?3 AND valid = 1
            GROUP BY ts_ms / ?1 ORDER BY 1
            """
        ).bind(.integer(max(bucketMs, 1)), .integer(fromMs), .integer(toMs))
        defer { statement.reset() }
        while try statement.step() { try body(statement.int64(0), statement.double(1)) }
    }
}
