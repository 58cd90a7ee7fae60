/// GPS fixes (`fix`, schema 1): one per receiver time, whatever the receiver (a fix's time names it).
public enum FixKind: SampleKind {
    public typealias Row = StoredFix

    public static let name = "fix"
    public static let table = "fix"
    public static let rowsName = "fixes"

    public static func timeMs(of fix: StoredFix) -> Int64 { fix.timeMs }

    public static func keys(of fix: StoredFix) -> [SampleKey] { [SampleKey(kind: name, value: fix.timeMs)] }

    public static func isStored(_ fix: StoredFix, in db: SQLiteConnection) throws -> Bool {
        try db.exists(db.statement("SELECT 1 FROM fix WHERE ts_ms = ?").bind(.integer(fix.timeMs)))
    }

    public static func insert(_ fix: StoredFix, into db: SQLiteConnection) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO fix (ts_ms, received_ms, lat, lon, alt_hae, alt_msl, speed, track, climb, eph, epv,
                                       mode, satellites, time_source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .integer(fix.timeMs), .integer(fix.receivedMs), .real(fix.lat), .real(fix.lon), .double(fix.altHAE),
            .double(fix.altMSL), .double(fix.speed), .double(fix.track), .double(fix.climb), .double(fix.eph),
            .double(fix.epv), .integer(Int64(fix.mode)), .int(fix.satellites), .text(fix.timeSource)
        ).run()
        return db.changes > 0 ? db.lastInsertRowID : nil
    }

    public static func encode(_ fix: StoredFix, into out: inout JournalWriter) {
        out.int64(fix.timeMs)
        out.int64(fix.receivedMs)
        out.double(fix.lat)
        out.double(fix.lon)
        for value in [fix.altHAE, fix.altMSL, fix.speed, fix.track, fix.climb, fix.eph, fix.epv] { out.optionalDouble(value) }
        out.int64(Int64(fix.mode))
        out.optionalInt64(fix.satellites.map(Int64.init))
        out.string(fix.timeSource)
    }

    public static func decode(from input: inout JournalReader, withOrigins: Bool) -> StoredFix? {
        guard let timeMs = input.int64(), let receivedMs = input.int64(), let lat = input.double(), let lon = input.double()
        else { return nil }
        var optionals: [Double?] = []
        for _ in 0..<7 {
            guard let value = input.optionalDouble() else { return nil }
            optionals.append(value)
        }
        guard let mode = input.int64(), let satellites = input.optionalInt64(), let source = input.string() else { return nil }
        return StoredFix(
            timeMs: timeMs, receivedMs: receivedMs, lat: lat, lon: lon, altHAE: optionals[0], altMSL: optionals[1],
            speed: optionals[2], track: optionals[3], climb: optionals[4], eph: optionals[5], epv: optionals[6],
            mode: Int(mode), satellites: satellites.map { Int($0) }, timeSource: source)
    }

    public static func forEach(fromMs: Int64, toMs: Int64, upToID: Int64, in db: SQLiteConnection, _ body: (StoredFix) throws -> Void) throws {
        try StoreReads(db).forEachFix(fromMs: fromMs, toMs: toMs, upToID: upToID, body)
    }

    public static func forEach(afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (StoredFix, Int64) throws -> Void) throws {
        try each(db.statement(sql: StoredFix.afterID).bind(.integer(afterID), .integer(Int64(limit))), body)
    }

    public static func forEach(
        fromMs: Int64, afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (StoredFix, Int64) throws -> Void
    ) throws {
        try each(db.statement(sql: afterTime).bind(.integer(fromMs), .integer(afterID), .integer(Int64(limit))), body)
    }

    private static let afterTime = "SELECT \(StoredFix.selection) FROM fix WHERE (ts_ms, id) > (?, ?) ORDER BY ts_ms, id LIMIT ?"

    private static func each(_ statement: SQLiteStatement, _ body: (StoredFix, Int64) throws -> Void) throws {
        defer { statement.reset() }
        let columns = try statement.layout(StoredFix.Columns.self)
        while try statement.step() { try body(columns.fix(statement), columns.id(statement)) }
    }
}
