extension SQLiteConnection {
    func sleepNight(date: String) throws -> SleepNightRead {
        // A file the agent has not opened since schema 11 (the command line reads it as it is)
        // has no kept nights.
        guard try hasTable("sleep_night") else {
            return SleepNightRead(night: nil, damaged: false)
        }
        let statement = try self.statement(
            "SELECT window_rows, window_time_sum, settings, night, check_crc FROM sleep_night WHERE date = ?"
        ).bind(.text(date))
        defer { statement.reset() }
        guard try statement.step() else { return SleepNightRead(night: nil, damaged: false) }
        let night = StoredSleepNight(
            date: date, window: RowFingerprint(rows: statement.int64(0), timeSumMs: statement.int64(1)), settings: statement.text(2),
            night: statement.text(3))
        guard night.check == statement.int64(4) else { return SleepNightRead(night: nil, damaged: true) }
        return SleepNightRead(night: night, damaged: false)
    }

    /// The heart-rate rows in `[fromMs, toMs)` (`fingerprint(of:)`).
    func heartRateFingerprint(fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        try fingerprint(
            of: statement("SELECT count(*), coalesce(sum(ts_ms - ?1), 0) FROM hr_sample WHERE ts_ms >= ?1 AND ts_ms < ?2"),
            fromMs: fromMs, toMs: toMs)
    }

    /// The number of a time-indexed table's rows in `[fromMs, toMs)` and the sum of their times
    /// after `fromMs`, from `count`'s query (read from the time index alone).
    func fingerprint(of count: SQLiteStatement, fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        let statement = try count.bind(.integer(fromMs), .integer(toMs))
        defer { statement.reset() }
        guard try statement.step() else { return RowFingerprint(rows: 0, timeSumMs: 0) }
        return RowFingerprint(rows: statement.int64(0), timeSumMs: statement.int64(1))
    }
}

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

    public func sleepNight(date: String) throws -> SleepNightRead { try db.sleepNight(date: date) }
}

extension StoreReader {
    public func sleepNight(date: String) throws -> SleepNightRead { try db.sleepNight(date: date) }

    public func heartRateFingerprint(fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        try db.heartRateFingerprint(fromMs: fromMs, toMs: toMs)
    }
}
