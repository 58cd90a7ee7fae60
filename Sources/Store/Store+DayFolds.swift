/// Day folds kept (schema 12): written by the agent's writer, read by queries through a reader.
extension SQLiteConnection {
    func dayFold(date: String) throws -> DayFoldRead {
        // A file the agent has not opened since schema 12 (the command line reads it as it is)
        // has no kept folds.
        guard try hasTable("day_fold") else {
            return DayFoldRead(fold: nil, damaged: false)
        }
        let statement = try self.statement(
            "SELECT end_ms, hr_rows, hr_time_sum, fix_rows, fix_time_sum, settings, fold, check_crc FROM day_fold WHERE date = ?"
        ).bind(.text(date))
        defer { statement.reset() }
        guard try statement.step() else { return DayFoldRead(fold: nil, damaged: false) }
        let fold = StoredDayFold(
            date: date, endMs: statement.int64(0), heartRate: RowFingerprint(rows: statement.int64(1), timeSumMs: statement.int64(2)),
            fixes: RowFingerprint(rows: statement.int64(3), timeSumMs: statement.int64(4)), settings: statement.text(5),
            fold: statement.text(6))
        guard fold.check == statement.int64(7) else { return DayFoldRead(fold: nil, damaged: true) }
        return DayFoldRead(fold: fold, damaged: false)
    }

    /// The fix rows in `[fromMs, toMs)`, counted from the time index alone (`ts_ms` is unique).
    func fixFingerprint(fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        try fingerprint(
            of: statement("SELECT count(*), coalesce(sum(ts_ms - ?1), 0) FROM fix WHERE ts_ms >= ?1 AND ts_ms < ?2"),
            fromMs: fromMs, toMs: toMs)
    }
}

extension Store {
    /// Keeps a day's folds (replacing what was kept for its date).
    public func saveDayFold(_ fold: StoredDayFold) throws {
        try db.statement(
            """
            INSERT OR REPLACE INTO day_fold (date, end_ms, hr_rows, hr_time_sum, fix_rows, fix_time_sum, settings, fold, check_crc)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .text(fold.date), .integer(fold.endMs), .integer(fold.heartRate.rows), .integer(fold.heartRate.timeSumMs),
            .integer(fold.fixes.rows), .integer(fold.fixes.timeSumMs), .text(fold.settings), .text(fold.fold), .integer(fold.check)
        ).run()
    }

    public func dayFold(date: String) throws -> DayFoldRead { try db.dayFold(date: date) }
}

extension StoreReader {
    public func dayFold(date: String) throws -> DayFoldRead { try db.dayFold(date: date) }

    public func fixFingerprint(fromMs: Int64, toMs: Int64) throws -> RowFingerprint { try db.fixFingerprint(fromMs: fromMs, toMs: toMs) }
}
