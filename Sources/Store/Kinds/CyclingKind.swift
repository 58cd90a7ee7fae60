/// One CSC Measurement notification (0x2A5B, Cycling Speed and Cadence) as stored: the value as
/// received, decoded when read (SensorBridge's `CSCMeasurement`), like a foot pod's RSC.
public struct StoredCSCMeasurement: Sendable, Equatable {
    public var sensor: String
    public var timeMs: Int64
    public var receivedMs: Int64
    /// The 0x2A5B value as received: cumulative wheel and crank revolutions and their event times.
    public var raw: [UInt8]
    /// Stored at its receive time: what the bridge sent, hashed (as `StoredHeartRate.origin`).
    public var origin: Int64?

    public init(sensor: String, timeMs: Int64, receivedMs: Int64, raw: [UInt8], origin: Int64? = nil) {
        self.sensor = sensor
        self.timeMs = timeMs
        self.receivedMs = receivedMs
        self.raw = raw
        self.origin = origin
    }
}

/// A bike's speed and cadence sensor (`csc_record`): named by sensor and time, or, stored at its
/// receive time, by sensor and origin. Its table came after schema 13, so it brings it here.
public enum CyclingKind: SampleKind {
    public typealias Row = StoredCSCMeasurement

    public static let name = "csc"
    public static let table = "csc_record"
    public static let rowsName = "csc_records"

    public static let migrations = [
        """
        CREATE TABLE IF NOT EXISTS csc_record (
            id INTEGER PRIMARY KEY,
            sensor TEXT NOT NULL,
            ts_ms INTEGER NOT NULL,
            received_ms INTEGER NOT NULL,
            raw BLOB NOT NULL,                    -- the 0x2A5B value as received
            origin INTEGER,                       -- what the bridge sent, hashed (docs/contract.md "Replays")
            UNIQUE (sensor, ts_ms)
        );
        CREATE INDEX IF NOT EXISTS csc_record_by_time ON csc_record (ts_ms);
        CREATE UNIQUE INDEX IF NOT EXISTS csc_record_origin ON csc_record (sensor, origin) WHERE origin IS NOT NULL;
        ALTER TABLE day_aggregate ADD COLUMN built_csc_id INTEGER;
        ALTER TABLE day_aggregate ADD COLUMN newest_csc_id INTEGER;
        """,
    ]

    public static func timeMs(of row: Row) -> Int64 { row.timeMs }

    public static func keys(of row: Row) -> [SampleKey] {
        let byTime = SampleKey(kind: name, sensor: row.sensor, value: row.timeMs)
        guard let origin = row.origin else { return [byTime] }
        return [byTime, SampleKey(kind: name, sensor: row.sensor, part: "origin", value: origin)]
    }

    public static func isStored(_ row: Row, in db: SQLiteConnection) throws -> Bool {
        if try db.exists(db.statement("SELECT 1 FROM csc_record WHERE sensor = ? AND ts_ms = ?")
            .bind(.text(row.sensor), .integer(row.timeMs))) { return true }
        guard let origin = row.origin else { return false }
        return try db.exists(db.statement("SELECT 1 FROM csc_record WHERE sensor = ? AND origin = ?").bind(.text(row.sensor), .integer(origin)))
    }

    public static func insert(_ row: Row, into db: SQLiteConnection) throws -> Int64? {
        try db.statement("INSERT OR IGNORE INTO csc_record (sensor, ts_ms, received_ms, raw, origin) VALUES (?, ?, ?, ?, ?)").bind(
            .text(row.sensor), .integer(row.timeMs), .integer(row.receivedMs), .blob(row.raw), row.origin.map { .integer($0) }
        ).run()
        return db.changes > 0 ? db.lastInsertRowID : nil
    }

    public static func encode(_ row: Row, into out: inout JournalWriter) {
        out.string(row.sensor)
        out.int64(row.timeMs)
        out.int64(row.receivedMs)
        out.bytes(row.raw)
        out.optionalInt64(row.origin)
    }

    public static func decode(from input: inout JournalReader, withOrigins: Bool) -> Row? {
        guard let sensor = input.string(), let timeMs = input.int64(), let receivedMs = input.int64(), let raw = input.bytes(),
            let origin = input.optionalInt64()
        else { return nil }
        return StoredCSCMeasurement(sensor: sensor, timeMs: timeMs, receivedMs: receivedMs, raw: raw, origin: origin)
    }

    public static func forEach(fromMs: Int64, toMs: Int64, upToID: Int64, in db: SQLiteConnection, _ body: (Row) throws -> Void) throws {
        try each(db.statement(sql: inTime).bind(.integer(fromMs), .integer(toMs), .integer(upToID))) { row, _ in try body(row) }
    }

    public static func forEach(afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (Row, Int64) throws -> Void) throws {
        try each(db.statement(sql: afterIDSQL).bind(.integer(afterID), .integer(Int64(limit))), body)
    }

    public static func forEach(fromMs: Int64, afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (Row, Int64) throws -> Void) throws {
        try each(db.statement(sql: afterTime).bind(.integer(fromMs), .integer(afterID), .integer(Int64(limit))), body)
    }

    private static let columns = "sensor, ts_ms, received_ms, raw, origin, id"
    private static let inTime = "SELECT \(columns) FROM csc_record WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms, sensor"
    private static let afterIDSQL = "SELECT \(columns) FROM csc_record WHERE id > ? ORDER BY id LIMIT ?"
    private static let afterTime = "SELECT \(columns) FROM csc_record WHERE (ts_ms, id) > (?, ?) ORDER BY ts_ms, id LIMIT ?"

    private static func each(_ statement: SQLiteStatement, _ body: (Row, Int64) throws -> Void) throws {
        defer { statement.reset() }
        while try statement.step() {
            try body(StoredCSCMeasurement(
                sensor: statement.text(0), timeMs: statement.int64(1), receivedMs: statement.int64(2), raw: statement.blob(3),
                origin: statement.isNull(4) ? nil : statement.int64(4)), statement.int64(5))
        }
    }
}
