/// Day folds kept (schema 12): written by the agent's writer, read by queries through a reader.
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
}
