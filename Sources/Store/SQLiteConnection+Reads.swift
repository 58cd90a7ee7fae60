
/// The read queries, shared by the `Store` actor (the agent's writer connection) and
/// `StoreReader` (a read-only connection for queries and the command line).
extension SQLiteConnection {
    /// Fixes with `fromMs <= ts_ms < toMs`, in time order, streamed; `upTo` leaves out rows stored after a cursor was taken.
    func forEachFix(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredFix) throws -> Void) throws {
        let statement = try self.statement(sql: Self.fixesInTime)
            .bind(.integer(fromMs), .integer(toMs), .integer(cursor?.fixID ?? .max))
        defer { statement.reset() }
        let columns = try statement.layout(StoredFix.Columns.self)
        while try statement.step() { try body(columns.fix(statement)) }
    }

    private static let fixesInTime = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms"

    func forEachHeartRate(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredHeartRate) throws -> Void
    ) throws {
        let statement = try self.statement(sql: Self.heartRatesInTime)
            .bind(.integer(fromMs), .integer(toMs), .integer(cursor?.heartRateID ?? .max))
        defer { statement.reset() }
        // Notifications of one instant (two sensors) go out by sensor name, so a replay that stored
        // them in another order reads the same; the query gives them by row id.
        var instant: [StoredHeartRate] = []
        func flush() throws {
            if instant.count > 1 { instant.sort { $0.sensor < $1.sensor } }
            for sample in instant { try body(sample) }
            instant.removeAll(keepingCapacity: true)
        }
        try Self.groupedHeartRates(statement) { sample, _ in
            if let first = instant.first, first.timeMs != sample.timeMs { try flush() }
            instant.append(sample)
        }
        try flush()
    }

    /// One row per RR interval (or one without any) of `joinedHeartRateColumns`, grouped here by
    /// notification: half the time of a subquery per notification joining its intervals into
    /// text (issue 32).
    private static func groupedHeartRates(_ statement: SQLiteStatement, _ body: (StoredHeartRate, Int64) throws -> Void) throws {
        var current: (id: Int64, sample: StoredHeartRate)?
        while try statement.step() {
            let id = statement.int64(9)
            if current?.id != id {
                if let done = current { try body(done.sample, done.id) }
                current = (id, StoredHeartRate(
                    sensor: statement.text(0), timeMs: statement.int64(1), receivedMs: statement.int64(2), bpm: statement.int(3),
                    contact: statement.int(4), energyKJ: statement.optionalInt(5), valid: statement.int(6) != 0, raw: statement.blob(7),
                    origin: statement.isNull(10) ? nil : statement.int64(10)))
            }
            if !statement.isNull(8) { current?.sample.rrIntervals.append(statement.int(8)) }
        }
        if let done = current { try body(done.sample, done.id) }
    }

    private static let joinedHeartRateColumns = "s.sensor, s.ts_ms, s.received_ms, s.bpm, s.contact, s.energy_kj, s.valid, s.raw, r.rr_1024, s.id, s.origin"

    /// Ties in time in the order stored (row id), as `hr_sample_by_time` holds them, put in
    /// sensor order by `forEachHeartRate`: ordering them by sensor here made SQLite sort every
    /// read in a temporary B-tree (issue 32).
    private static let heartRatesInTime = """
        SELECT \(joinedHeartRateColumns)
        FROM hr_sample s LEFT JOIN rr_interval r ON r.sample_id = s.id
        WHERE s.ts_ms >= ? AND s.ts_ms < ? AND s.id <= ? ORDER BY s.ts_ms, s.id, r.position
        """

    /// `limit` notifications stored after `afterID`, in the order they were stored, each with its
    /// row id.
    func heartRates(afterID: Int64, limit: Int, _ body: (StoredHeartRate, Int64) throws -> Void) throws {
        let statement = try self.statement(sql: Self.heartRatesAfterID).bind(.integer(afterID), .integer(Int64(limit)))
        defer { statement.reset() }
        try Self.groupedHeartRates(statement, body)
    }

    /// `limit` notifications after (`fromMs`, `afterID`) by time, then row id (several sensors can
    /// share a time), each with its row id: a reopen's copy.
    func heartRates(after fromMs: Int64, id afterID: Int64, limit: Int, _ body: (StoredHeartRate, Int64) throws -> Void) throws {
        let statement = try self.statement(sql: Self.heartRatesAfterTime)
            .bind(.integer(fromMs), .integer(afterID), .integer(Int64(limit)))
        defer { statement.reset() }
        try Self.groupedHeartRates(statement, body)
    }

    private static let heartRatesAfterID = """
        SELECT \(joinedHeartRateColumns)
        FROM (SELECT * FROM hr_sample WHERE id > ? ORDER BY id LIMIT ?) s LEFT JOIN rr_interval r ON r.sample_id = s.id
        ORDER BY s.id, r.position
        """

    private static let heartRatesAfterTime = """
        SELECT \(joinedHeartRateColumns)
        FROM (SELECT * FROM hr_sample WHERE (ts_ms, id) > (?, ?) ORDER BY ts_ms, id LIMIT ?) s
        LEFT JOIN rr_interval r ON r.sample_id = s.id
        ORDER BY s.ts_ms, s.id, r.position
        """

    func rowCursor() throws -> RowCursor {
        RowCursor(
            fixID: try scalarInt("SELECT coalesce(max(id), 0) FROM fix") ?? 0,
            heartRateID: try scalarInt("SELECT coalesce(max(id), 0) FROM hr_sample") ?? 0,
            stepID: try scalarInt("SELECT coalesce(max(id), 0) FROM step_record") ?? 0)
    }

    func rows(after cursor: RowCursor, limit: Int) throws -> NewRows {
        var next = cursor
        // Ids are only handed out upwards while rows exist; an emptied table starts again at 1.
        let current = try rowCursor()
        if current.fixID < next.fixID { next.fixID = 0 }
        if current.heartRateID < next.heartRateID { next.heartRateID = 0 }
        if current.stepID < next.stepID { next.stepID = 0 }
        let fixStatement = try statement(sql: StoredFix.afterID).bind(.integer(next.fixID), .integer(Int64(limit)))
        defer { fixStatement.reset() }
        let fixColumns = try fixStatement.layout(StoredFix.Columns.self)
        var fixes: [StoredFix] = []
        while try fixStatement.step() {
            fixes.append(fixColumns.fix(fixStatement))
            next.fixID = fixColumns.id(fixStatement)
        }
        var heartRates: [StoredHeartRate] = []
        try self.heartRates(afterID: next.heartRateID, limit: limit) { sample, id in
            heartRates.append(sample)
            next.heartRateID = id
        }
        let stepStatement = try statement(sql: StoredStepRecord.afterID).bind(.integer(next.stepID), .integer(Int64(limit)))
        defer { stepStatement.reset() }
        let stepColumns = try stepStatement.layout(StoredStepRecord.Columns.self)
        var steps: [StoredStepRecord] = []
        while try stepStatement.step() {
            steps.append(stepColumns.stepRecord(stepStatement))
            next.stepID = stepColumns.id(stepStatement)
        }
        return NewRows(fixes: fixes, heartRates: heartRates, steps: steps, cursor: next)
    }

    /// Step records with `fromMs <= ts_ms < toMs`, in time order (then sensor), streamed.
    func forEachStepRecord(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredStepRecord) throws -> Void
    ) throws {
        let statement = try self.statement(sql: Self.stepRecordsInTime)
            .bind(.integer(fromMs), .integer(toMs), .integer(cursor?.stepID ?? .max))
        defer { statement.reset() }
        let columns = try statement.layout(StoredStepRecord.Columns.self)
        while try statement.step() { try body(columns.stepRecord(statement)) }
    }

    private static let stepRecordsInTime = """
        SELECT \(StoredStepRecord.selection)
        FROM step_record WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms, sensor, kind
        """

    /// The time span of the rows stored after `cursor` (fixes, notifications, step records), nil
    /// when there are none: which days a batch of new rows touched. Row-id range scans.
    func span(ofRowsAfter cursor: RowCursor) throws -> (fromMs: Int64, toMs: Int64)? {
        var span: (fromMs: Int64, toMs: Int64)?
        for (sql, id): (StaticString, Int64) in [
            ("SELECT min(ts_ms), max(ts_ms) FROM fix WHERE id > ?", cursor.fixID),
            ("SELECT min(ts_ms), max(ts_ms) FROM hr_sample WHERE id > ?", cursor.heartRateID),
            ("SELECT min(ts_ms), max(ts_ms) FROM step_record WHERE id > ?", cursor.stepID),
        ] {
            let statement = try self.statement(sql).bind(.integer(id))
            defer { statement.reset() }
            guard try statement.step(), !statement.isNull(0) else { continue }
            let (from, to) = (statement.int64(0), statement.int64(1))
            span = (min(span?.fromMs ?? from, from), max(span?.toMs ?? to, to))
        }
        return span
    }

    /// Whether any fix, heart-rate notification or step record lies in `[fromMs, toMs)`.
    func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool {
        for sql: StaticString in [
            "SELECT EXISTS (SELECT 1 FROM fix WHERE ts_ms >= ? AND ts_ms < ?)",
            "SELECT EXISTS (SELECT 1 FROM hr_sample WHERE ts_ms >= ? AND ts_ms < ?)",
            "SELECT EXISTS (SELECT 1 FROM step_record WHERE ts_ms >= ? AND ts_ms < ?)",
        ] {
            let statement = try self.statement(sql).bind(.integer(fromMs), .integer(toMs))
            defer { statement.reset() }
            if try statement.step(), statement.int(0) != 0 { return true }
        }
        return false
    }

    func dayAggregate(date: String) throws -> StoredDayAggregate? {
        let statement = try self.statement(
            """
            SELECT date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix,
                   coalesce(newest_fix_id > coalesce(built_fix_id, 0), 0) OR coalesce(newest_hr_id > coalesce(built_hr_id, 0), 0)
                   OR coalesce(newest_step_id > coalesce(built_step_id, 0), 0)
            FROM day_aggregate WHERE date = ?
            """
        ).bind(.text(date))
        defer { statement.reset() }  // a statement left mid-result holds its read transaction open
        guard try statement.step() else { return nil }
        return StoredDayAggregate(
            date: statement.text(0), tz: statement.text(1), payload: statement.text(2), final: statement.int(3) != 0,
            updatedMs: statement.int64(4), publishedPayload: statement.optionalText(5), firstFix: statement.optionalText(6),
            lastFix: statement.optionalText(7), isStale: statement.int(8) != 0)
    }
}
