import Foundation

/// A read-only connection to the store, for answering queries and for the command line while
/// the agent runs: WAL lets it read a consistent snapshot without ever holding up the writer.
///
/// Not thread-safe: its owner uses it from one thread (or serial queue) at a time.
public final class StoreReader {
    var db: SQLiteConnection
    /// The domain reads on this reader's connection (StoreReads.swift).
    var reads: StoreReads { StoreReads(db) }
    private let path: String
    private var opened: FileIdentity.Node?

    public init(path: String) throws {
        self.path = path
        db = try Self.open(path)
        opened = FileIdentity.Node(path: path)
    }

    /// A reader's page cache: its reads are scans of the time indexes, which the kernel's page
    /// cache serves as well, and the agent holds several readers (queries, the publisher, the
    /// resender). SQLite's default of 2 000 KiB each came to a quarter of the agent's heap while a
    /// backlog landed (issue 32, docs/figures.md "Fifth step").
    static let cacheKiB = 512

    private static func open(_ path: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        try connection.execute("PRAGMA cache_size = -\(cacheKiB)")
        return connection
    }

    /// Runs `body`'s reads on one snapshot of the store — of the file now at the path: once the
    /// agent has reopened a store file that was deleted or replaced (`Store.reopen`), the reader
    /// follows instead of reading the unlinked file on.
    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        followPath()
        return try db.readTransaction(body)
    }

    private func followPath() {
        guard let current = FileIdentity.Node(path: path), current != opened,
            let fresh = try? Self.open(path)
        else { return }
        db = fresh
        opened = current
    }

    public func dayAggregate(date: String) throws -> StoredDayAggregate? { try reads.dayAggregate(date: date) }
    public func rowCursor() throws -> RowCursor { try reads.rowCursor() }
    public func rows(after cursor: RowCursor, limit: Int) throws -> NewRows { try reads.rows(after: cursor, limit: limit) }
    public func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool { try reads.hasRawData(fromMs: fromMs, toMs: toMs) }
    public func span(ofRowsAfter cursor: RowCursor) throws -> (fromMs: Int64, toMs: Int64)? { try reads.span(ofRowsAfter: cursor) }

    /// `upTo` leaves out rows stored after a cursor was taken.
    public func forEachFix(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredFix) throws -> Void) throws {
        try reads.forEachFix(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    /// `upTo` leaves out rows stored after a cursor was taken.
    public func forEachStepRecord(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredStepRecord) throws -> Void) throws {
        try reads.forEachStepRecord(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    /// `upTo` leaves out rows stored after a cursor was taken.
    public func forEachHeartRate(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredHeartRate) throws -> Void) throws {
        try reads.forEachHeartRate(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    /// The newest fix stamped with GPS time, by the order fixes were stored (the last few
    /// thousand are looked at: a seek, not a scan).
    public func newestGPSTimedFix() throws -> StoredFix? {
        let statement = try db.statement(sql: Self.newestGPSTimedFix)
        defer { statement.reset() }
        return try statement.step() ? statement.layout(StoredFix.Columns.self).fix(statement) : nil
    }

    private static let newestGPSTimedFix = """
        SELECT \(StoredFix.selection) FROM fix
        WHERE id > (SELECT coalesce(max(id), 0) - 5000 FROM fix) AND time_source = 'gps' ORDER BY id DESC LIMIT 1
        """

    /// The first and last fix in `[fromMs, toMs)`: two index seeks.
    public func fixEnds(fromMs: Int64, toMs: Int64) throws -> (first: StoredFix?, last: StoredFix?) {
        var first: StoredFix?
        var last: StoredFix?
        let firstStatement = try db.statement(sql: Self.firstFix).bind(.integer(fromMs), .integer(toMs))
        defer { firstStatement.reset() }
        if try firstStatement.step() { first = try firstStatement.layout(StoredFix.Columns.self).fix(firstStatement) }
        let lastStatement = try db.statement(sql: Self.lastFix).bind(.integer(fromMs), .integer(toMs))
        defer { lastStatement.reset() }
        if try lastStatement.step() { last = try lastStatement.layout(StoredFix.Columns.self).fix(lastStatement) }
        return (first, last)
    }

    private static let firstFix = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms LIMIT 1"
    private static let lastFix = "SELECT \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms DESC LIMIT 1"

    /// The first fix of every `slotMs` slot in `[fromMs, toMs)`, in time order.
    public func firstFixPerSlot(fromMs: Int64, toMs: Int64, slotMs: Int64, _ body: (StoredFix) throws -> Void) throws {
        let statement = try db.statement(sql: Self.firstFixPerSlot).bind(.integer(fromMs), .integer(toMs), .integer(max(slotMs, 1)))
        defer { statement.reset() }
        let columns = try statement.layout(StoredFix.Columns.self)
        while try statement.step() { try body(columns.fix(statement)) }
    }

    /// SQLite takes the bare columns of an aggregate query from the row that gave min(): the
    /// selection's own `ts_ms` among them, so it is the minimum.
    private static let firstFixPerSlot = """
        SELECT min(ts_ms), \(StoredFix.selection) FROM fix WHERE ts_ms >= ? AND ts_ms < ? GROUP BY ts_ms / ? ORDER BY 1
        """

    /// Valid heart-rate samples in `[fromMs, toMs)` as (time, bpm), in time order.
    public func forEachValidHeartRate(fromMs: Int64, toMs: Int64, _ body: (Int64, Int) throws -> Void) throws {
        let statement = try db.statement(
            "SELECT ts_ms, bpm FROM hr_sample WHERE ts_ms >= ? AND ts_ms < ? AND valid = 1 ORDER BY ts_ms"
        ).bind(.integer(fromMs), .integer(toMs))
        defer { statement.reset() }
        while try statement.step() { try body(statement.int64(0), statement.int(1)) }
    }

    /// The mean of the valid samples of every `bucketMs` in `[fromMs, toMs)`: (bucket start, mean).
    public func heartRateMeans(fromMs: Int64, toMs: Int64, bucketMs: Int64, _ body: (Int64, Double) throws -> Void) throws {
        let statement = try db.statement(
            """
            SELECT (ts_ms / ?1) * ?1, avg(bpm) FROM hr_sample WHERE ts_ms >= ?2 AND ts_ms < ?3 AND valid = 1
            GROUP BY ts_ms / ?1 ORDER BY 1
            """
        ).bind(.integer(max(bucketMs, 1)), .integer(fromMs), .integer(toMs))
        defer { statement.reset() }
        while try statement.step() { try body(statement.int64(0), statement.double(1)) }
    }
}

/// Workouts and gear, for the query and the command line (inside `snapshot`, like the reads above).
extension StoreReader {
    public func workouts(fromMs: Int64, toMs: Int64) throws -> [StoredWorkout] {
        try reads.workouts(fromMs: fromMs, toMs: toMs, finishedOnly: true)
    }

    public func workout(id: String) throws -> StoredWorkout? { try reads.workout(id: id) }
    public func allGear() throws -> [StoredGear] { try reads.allGear() }
}
