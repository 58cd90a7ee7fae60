/// What is kept of a day: its aggregate, its folds, its sleep night and epochs, and the
/// fingerprints that tell whether a kept fold or night still matches the rows under it.
extension StoreReads {
    public func dayAggregate(date: String) throws -> StoredDayAggregate? {
        let statement = try db.statement(sql: Self.dayAggregateByDate).bind(.text(date))
        defer { statement.reset() }  // a statement left mid-result holds its read transaction open
        guard try statement.step() else { return nil }
        return StoredDayAggregate(
            date: statement.text(0), tz: statement.text(1), payload: statement.text(2), final: statement.int(3) != 0,
            updatedMs: statement.int64(4), publishedPayload: statement.optionalText(5), firstFix: statement.optionalText(6),
            lastFix: statement.optionalText(7), isStale: statement.int(8) != 0)
    }

    private static let dayAggregateByDate = """
        SELECT date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix, \(AggregateFreshness.staleExpression)
        FROM day_aggregate WHERE date = ?
        """

    /// The newest day with a final aggregate (dates sort as text).
    public func latestFinalAggregateDay() throws -> String? {
        try db.scalarText("SELECT date FROM day_aggregate WHERE final = 1 ORDER BY date DESC LIMIT 1")
    }

    public func dayFold(date: String) throws -> DayFoldRead {
        // A file the agent has not opened since schema 12 (the command line reads it as it is)
        // has no kept folds.
        guard try db.hasTable("day_fold") else {
            return DayFoldRead(fold: nil, damaged: false)
        }
        let statement = try db.statement(
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
    public func fixFingerprint(fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        try fingerprint(
            of: db.statement("SELECT count(*), coalesce(sum(ts_ms - ?1), 0) FROM fix WHERE ts_ms >= ?1 AND ts_ms < ?2"),
            fromMs: fromMs, toMs: toMs)
    }

    public func sleepNight(date: String) throws -> SleepNightRead {
        // A file the agent has not opened since schema 11 (the command line reads it as it is)
        // has no kept nights.
        guard try db.hasTable("sleep_night") else {
            return SleepNightRead(night: nil, damaged: false)
        }
        let statement = try db.statement(
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
    public func heartRateFingerprint(fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        try fingerprint(
            of: db.statement("SELECT count(*), coalesce(sum(ts_ms - ?1), 0) FROM hr_sample WHERE ts_ms >= ?1 AND ts_ms < ?2"),
            fromMs: fromMs, toMs: toMs)
    }

    /// The number of a time-indexed table's rows in `[fromMs, toMs)` and the sum of their times
    /// after `fromMs`, from `count`'s query (read from the time index alone).
    private func fingerprint(of count: SQLiteStatement, fromMs: Int64, toMs: Int64) throws -> RowFingerprint {
        let statement = try count.bind(.integer(fromMs), .integer(toMs))
        defer { statement.reset() }
        guard try statement.step() else { return RowFingerprint(rows: 0, timeSumMs: 0) }
        return RowFingerprint(rows: statement.int64(0), timeSumMs: statement.int64(1))
    }

    public func sleepEpochs(sensor: String, fromS: Int64, toS: Int64) throws -> SleepEpochRead {
        let statement = try db.statement(
            "SELECT start_s, inputs, vector, check_crc FROM sleep_epoch WHERE start_s >= ? AND start_s < ? AND sensor = ?"
        ).bind(.integer(fromS), .integer(toS), .text(sensor))
        defer { statement.reset() }
        var read = SleepEpochRead(epochs: [:], failedCheck: 0)
        while try statement.step() {
            let epoch = StoredSleepEpoch(
                sensor: sensor, startS: statement.int64(0), inputs: UInt64(bitPattern: statement.int64(1)), vector: statement.blob(2))
            guard epoch.check == statement.int64(3) else {
                read.failedCheck += 1
                continue
            }
            read.epochs[epoch.startS] = epoch
        }
        return read
    }
}
