extension Store {
    /// Keeps a finished night (replacing what was kept for its date).
    public func saveSleepNight(_ night: StoredSleepNight) throws {
        try db.statement(
            "INSERT OR REPLACE INTO sleep_night (date, window_rows, window_time_sum, settings, night, check_crc) VALUES (?, ?, ?, ?, ?, ?)"
        ).bind(
            .text(night.date), .integer(night.window.rows), .integer(night.window.timeSumMs), .text(night.settings), .text(night.night),
            .integer(night.check)
        ).run()
    }
}
