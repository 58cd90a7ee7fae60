/// Step records (`step_record`, schema 5): a foot pod's RSC notifications (0x2A53) and the step
/// windows counted from a chest strap's accelerometer (docs/steps.md). Named by sensor, record
/// kind and time, or, an RSC notification stored at its receive time, by its origin.
public enum StepRecordKind: SampleKind {
    public typealias Row = StoredStepRecord

    public static let name = "step"
    public static let table = "step_record"
    public static let rowsName = "step_records"

    public static func timeMs(of record: StoredStepRecord) -> Int64 { record.timeMs }

    public static func keys(of record: StoredStepRecord) -> [SampleKey] {
        let byTime = SampleKey(kind: name, sensor: record.sensor, part: record.kind.rawValue, value: record.timeMs)
        guard let origin = record.origin else { return [byTime] }
        return [byTime, SampleKey(kind: name, sensor: record.sensor, part: record.kind.rawValue + " origin", value: origin)]
    }

    public static func isStored(_ record: StoredStepRecord, in db: SQLiteConnection) throws -> Bool {
        if try db.exists(db.statement("SELECT 1 FROM step_record WHERE sensor = ? AND kind = ? AND ts_ms = ?")
            .bind(.text(record.sensor), .text(record.kind.rawValue), .integer(record.timeMs))) { return true }
        guard let origin = record.origin else { return false }
        return try db.exists(db.statement("SELECT 1 FROM step_record WHERE sensor = ? AND kind = ? AND origin = ?")
            .bind(.text(record.sensor), .text(record.kind.rawValue), .integer(origin)))
    }

    public static func insert(_ record: StoredStepRecord, into db: SQLiteConnection) throws -> Int64? {
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

    public static func encode(_ record: StoredStepRecord, into out: inout JournalWriter) {
        out.string(record.sensor)
        out.string(record.kind.rawValue)
        out.int64(record.timeMs)
        out.int64(record.receivedMs)
        out.bytes(record.raw)
        out.optionalInt64(record.endMs)
        out.optionalInt64(record.coveredMs)
        out.optionalInt64(record.steps.map(Int64.init))
        out.optionalInt64(record.origin)
    }

    public static func decode(from input: inout JournalReader, withOrigins: Bool) -> StoredStepRecord? {
        guard let sensor = input.string(), let kindName = input.string(), let kind = StoredStepRecord.Kind(rawValue: kindName),
            let timeMs = input.int64(), let receivedMs = input.int64(), let raw = input.bytes(), let endMs = input.optionalInt64(),
            let coveredMs = input.optionalInt64(), let steps = input.optionalInt64()
        else { return nil }
        var record = StoredStepRecord(sensor: sensor, timeMs: timeMs, receivedMs: receivedMs, rsc: raw)
        record.kind = kind
        record.endMs = endMs
        record.coveredMs = coveredMs
        record.steps = steps.map { Int($0) }
        if withOrigins {
            guard let origin = input.optionalInt64() else { return nil }
            record.origin = origin
        }
        return record
    }

    public static func forEach(
        fromMs: Int64, toMs: Int64, upToID: Int64, in db: SQLiteConnection, _ body: (StoredStepRecord) throws -> Void
    ) throws {
        try StoreReads(db).forEachStepRecord(fromMs: fromMs, toMs: toMs, upToID: upToID, body)
    }

    public static func forEach(
        afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (StoredStepRecord, Int64) throws -> Void
    ) throws {
        try each(db.statement(sql: StoredStepRecord.afterID).bind(.integer(afterID), .integer(Int64(limit))), body)
    }

    public static func forEach(
        fromMs: Int64, afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (StoredStepRecord, Int64) throws -> Void
    ) throws {
        try each(db.statement(sql: afterTime).bind(.integer(fromMs), .integer(afterID), .integer(Int64(limit))), body)
    }

    private static let afterTime = """
        SELECT \(StoredStepRecord.selection) FROM step_record WHERE (ts_ms, id) > (?, ?) ORDER BY ts_ms, id LIMIT ?
        """

    private static func each(_ statement: SQLiteStatement, _ body: (StoredStepRecord, Int64) throws -> Void) throws {
        defer { statement.reset() }
        let columns = try statement.layout(StoredStepRecord.Columns.self)
        while try statement.step() { try body(columns.stepRecord(statement), columns.id(statement)) }
    }
}
