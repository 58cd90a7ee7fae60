/// Heart Rate Measurement notifications (`hr_sample`, schema 1) with their RR intervals
/// (`rr_interval`, a row each, back-dated from the notification). Named by sensor and time, or,
/// stored at its receive time, by sensor and origin (schema 13, docs/contract.md "Replays").
public enum HeartRateKind: SampleKind {
    public typealias Row = StoredHeartRate

    public static let name = "hr"
    public static let table = "hr_sample"
    public static let rowsName = "heart_rates"

    public static func timeMs(of sample: StoredHeartRate) -> Int64 { sample.timeMs }

    public static func keys(of sample: StoredHeartRate) -> [SampleKey] {
        let byTime = SampleKey(kind: name, sensor: sample.sensor, value: sample.timeMs)
        guard let origin = sample.origin else { return [byTime] }
        return [byTime, SampleKey(kind: name, sensor: sample.sensor, part: "origin", value: origin)]
    }

    public static func isStored(_ sample: StoredHeartRate, in db: SQLiteConnection) throws -> Bool {
        if try db.exists(db.statement("SELECT 1 FROM hr_sample WHERE sensor = ? AND ts_ms = ?")
            .bind(.text(sample.sensor), .integer(sample.timeMs))) { return true }
        guard let origin = sample.origin else { return false }
        return try db.exists(db.statement("SELECT 1 FROM hr_sample WHERE sensor = ? AND origin = ?")
            .bind(.text(sample.sensor), .integer(origin)))
    }

    public static func insert(_ heartRate: StoredHeartRate, into db: SQLiteConnection) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO hr_sample (sensor, ts_ms, received_ms, bpm, contact, energy_kj, valid, raw, origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .text(heartRate.sensor), .integer(heartRate.timeMs), .integer(heartRate.receivedMs),
            .integer(Int64(heartRate.bpm)), .integer(Int64(heartRate.contact)), .int(heartRate.energyKJ),
            .integer(heartRate.valid ? 1 : 0), .blob(heartRate.raw), heartRate.origin.map { .integer($0) }
        ).run()
        guard db.changes > 0 else { return nil }
        let sampleID = db.lastInsertRowID
        // RR intervals describe the beats before the notification: the newest ends at its time.
        var end = heartRate.timeMs
        var stamps: [Int64] = Array(repeating: 0, count: heartRate.rrIntervals.count)
        for index in heartRate.rrIntervals.indices.reversed() {
            stamps[index] = end
            end -= Int64((Double(heartRate.rrIntervals[index]) * 1000 / 1024).rounded())
        }
        for (position, rr) in heartRate.rrIntervals.enumerated() {
            try db.statement("INSERT INTO rr_interval (sample_id, position, ts_ms, rr_1024) VALUES (?, ?, ?, ?)").bind(
                .integer(sampleID), .integer(Int64(position)), .integer(stamps[position]), .integer(Int64(rr))
            ).run()
        }
        return sampleID
    }

    public static func encode(_ sample: StoredHeartRate, into out: inout JournalWriter) {
        out.string(sample.sensor)
        out.int64(sample.timeMs)
        out.int64(sample.receivedMs)
        out.int64(Int64(sample.bpm))
        out.int64(Int64(sample.contact))
        out.optionalInt64(sample.energyKJ.map(Int64.init))
        out.byte(sample.valid ? 1 : 0)
        out.bytes(sample.raw)
        out.uint16(sample.rrIntervals.count)
        for rr in sample.rrIntervals { out.uint16(rr) }
        out.optionalInt64(sample.origin)
    }

    public static func decode(from input: inout JournalReader, withOrigins: Bool) -> StoredHeartRate? {
        guard let sensor = input.string(), let timeMs = input.int64(), let receivedMs = input.int64(), let bpm = input.int64(),
            let contact = input.int64(), let energy = input.optionalInt64(), let valid = input.byte(), let raw = input.bytes(),
            let rrCount = input.uint16()
        else { return nil }
        var intervals: [Int] = []
        for _ in 0..<rrCount {
            guard let rr = input.uint16() else { return nil }
            intervals.append(rr)
        }
        var origin: Int64?
        if withOrigins {
            guard let value = input.optionalInt64() else { return nil }
            origin = value
        }
        return StoredHeartRate(
            sensor: sensor, timeMs: timeMs, receivedMs: receivedMs, bpm: Int(bpm), contact: Int(contact),
            energyKJ: energy.map { Int($0) }, valid: valid != 0, raw: raw, rrIntervals: intervals, origin: origin)
    }

    public static func forEach(
        fromMs: Int64, toMs: Int64, upToID: Int64, in db: SQLiteConnection, _ body: (StoredHeartRate) throws -> Void
    ) throws {
        try StoreReads(db).forEachHeartRate(fromMs: fromMs, toMs: toMs, upToID: upToID, body)
    }

    public static func forEach(
        afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (StoredHeartRate, Int64) throws -> Void
    ) throws {
        let statement = try db.statement(sql: afterIDSQL).bind(.integer(afterID), .integer(Int64(limit)))
        defer { statement.reset() }
        try grouped(statement, body)
    }

    public static func forEach(
        fromMs: Int64, afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (StoredHeartRate, Int64) throws -> Void
    ) throws {
        let statement = try db.statement(sql: afterTimeSQL).bind(.integer(fromMs), .integer(afterID), .integer(Int64(limit)))
        defer { statement.reset() }
        try grouped(statement, body)
    }

    /// One row per RR interval (or one without any) of `joinedColumns`, grouped here by
    /// notification: half the time of a subquery per notification joining its intervals into
    /// text (issue 32).
    static func grouped(_ statement: SQLiteStatement, _ body: (StoredHeartRate, Int64) throws -> Void) throws {
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

    /// A notification read with its RR intervals joined in, one row per interval (`grouped`).
    static let joinedColumns = "s.sensor, s.ts_ms, s.received_ms, s.bpm, s.contact, s.energy_kj, s.valid, s.raw, r.rr_1024, s.id, s.origin"

    private static let afterIDSQL = """
        SELECT \(joinedColumns)
        FROM (SELECT * FROM hr_sample WHERE id > ? ORDER BY id LIMIT ?) s LEFT JOIN rr_interval r ON r.sample_id = s.id
        ORDER BY s.id, r.position
        """

    private static let afterTimeSQL = """
        SELECT \(joinedColumns)
        FROM (SELECT * FROM hr_sample WHERE (ts_ms, id) > (?, ?) ORDER BY ts_ms, id LIMIT ?) s
        LEFT JOIN rr_interval r ON r.sample_id = s.id
        ORDER BY s.ts_ms, s.id, r.position
        """
}
