/// Raw rows by time (a day's fixes, heart-rate notifications and step records, up to a cursor)
/// and by row id (a reopen's copy).
extension StoreReads {
    /// Fixes with `fromMs <= ts_ms < toMs`, in time order, streamed; `upTo` leaves out rows stored after a cursor was taken.
    public func forEachFix(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredFix) throws -> Void) throws {
        try forEachFix(fromMs: fromMs, toMs: toMs, upToID: cursor?[FixKind.self] ?? .max, body)
    }

    /// Rows of any kind with `fromMs <= ts_ms < toMs`, in time order, streamed; `upTo` leaves out
    /// rows stored after a cursor was taken.
    public func forEach<Kind: SampleKind>(
        _ kind: Kind.Type, fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (Kind.Row) throws -> Void
    ) throws {
        try Kind.forEach(fromMs: fromMs, toMs: toMs, upToID: cursor?[kind] ?? .max, in: db, body)
    }

    func forEachFix(fromMs: Int64, toMs: Int64, upToID: Int64, _ body: (StoredFix) throws -> Void) throws {
        let statement = try db.statement(sql: Self.fixesInTime).bind(.integer(fromMs), .integer(toMs), .integer(upToID))
        defer { statement.reset() }
        let columns = try statement.layout(StoredFix.Columns.self)
        while try statement.step() { try body(columns.fix(statement)) }
    }

    public func fixes(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredFix] {
        var fixes: [StoredFix] = []
        try forEachFix(fromMs: fromMs, toMs: toMs, upTo: cursor) { fixes.append($0) }
        return fixes
    }

    private static let fixesInTime = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms"

    public func forEachHeartRate(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredHeartRate) throws -> Void
    ) throws {
        try forEachHeartRate(fromMs: fromMs, toMs: toMs, upToID: cursor?[HeartRateKind.self] ?? .max, body)
    }

    func forEachHeartRate(fromMs: Int64, toMs: Int64, upToID: Int64, _ body: (StoredHeartRate) throws -> Void) throws {
        let statement = try db.statement(sql: Self.heartRatesInTime).bind(.integer(fromMs), .integer(toMs), .integer(upToID))
        defer { statement.reset() }
        // Notifications of one instant (two sensors) go out by sensor name, so a replay that stored
        // them in another order reads the same; the query gives them by row id.
        var instant: [StoredHeartRate] = []
        func flush() throws {
            if instant.count > 1 { instant.sort { $0.sensor < $1.sensor } }
            for sample in instant { try body(sample) }
            instant.removeAll(keepingCapacity: true)
        }
        try HeartRateKind.grouped(statement) { sample, _ in
            if let first = instant.first, first.timeMs != sample.timeMs { try flush() }
            instant.append(sample)
        }
        try flush()
    }

    /// Heart-rate notifications with `fromMs <= ts_ms < toMs`, in time order, with their RR intervals.
    public func heartRates(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredHeartRate] {
        var samples: [StoredHeartRate] = []
        try forEachHeartRate(fromMs: fromMs, toMs: toMs, upTo: cursor) { samples.append($0) }
        return samples
    }

    /// Ties in time in the order stored (row id), as `hr_sample_by_time` holds them, put in
    /// sensor order by `forEachHeartRate`: ordering them by sensor here made SQLite sort every
    /// read in a temporary B-tree (issue 32).
    private static let heartRatesInTime = """
        SELECT \(HeartRateKind.joinedColumns)
        FROM hr_sample s LEFT JOIN rr_interval r ON r.sample_id = s.id
        WHERE s.ts_ms >= ? AND s.ts_ms < ? AND s.id <= ? ORDER BY s.ts_ms, s.id, r.position
        """

    /// Step records with `fromMs <= ts_ms < toMs`, in time order (then sensor), streamed.
    public func forEachStepRecord(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredStepRecord) throws -> Void
    ) throws {
        try forEachStepRecord(fromMs: fromMs, toMs: toMs, upToID: cursor?[StepRecordKind.self] ?? .max, body)
    }

    func forEachStepRecord(fromMs: Int64, toMs: Int64, upToID: Int64, _ body: (StoredStepRecord) throws -> Void) throws {
        let statement = try db.statement(sql: Self.stepRecordsInTime).bind(.integer(fromMs), .integer(toMs), .integer(upToID))
        defer { statement.reset() }
        let columns = try statement.layout(StoredStepRecord.Columns.self)
        while try statement.step() { try body(columns.stepRecord(statement)) }
    }

    public func stepRecords(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredStepRecord] {
        var records: [StoredStepRecord] = []
        try forEachStepRecord(fromMs: fromMs, toMs: toMs, upTo: cursor) { records.append($0) }
        return records
    }

    private static let stepRecordsInTime = """
        SELECT \(StoredStepRecord.selection)
        FROM step_record WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms, sensor, kind
        """

    /// The origins of the accelerometer batches lately counted at their receive time, newest
    /// last, at most `perSensor` of each sensor: what `AccelerometerStepWindows` remembered
    /// before the agent stopped. Read from the newest `scannedRows` step records only (a row-id
    /// range, whatever else the table holds), so a start costs the same on a year-old file.
    public func recentAccelerometerOrigins(perSensor: Int, scannedRows: Int = 20_000) throws -> [String: [Int64]] {
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
