/// One kind of sensor sample the store keeps (a GPS fix, a heart-rate notification, a step
/// record…), declared once: its table, how a row is inserted and read back after a row id, how
/// it is packed into an ingest journal slot, and what names it so that a replay stores nothing.
/// Everything that moves samples — a write's batch (`SampleBatch`), the journal's windows, the
/// cursor that followers read new rows from (`RowCursor`), the day aggregates' freshness, the
/// retention, a reopen's copy — goes through `SampleKinds.all` and this protocol, so a new kind
/// is a file that conforms and one line in `SampleKinds`.
///
/// The table must have `id INTEGER PRIMARY KEY` and `ts_ms INTEGER NOT NULL` with an index on
/// `ts_ms` (the generic queries use both), and `day_aggregate` must have `built_<name>_id` and
/// `newest_<name>_id` (`migrations` adds them for a kind added after schema 13).
public protocol SampleKind: Sendable {
    associatedtype Row: Sendable, Equatable

    /// Short and stable: the journal's tag for the kind, the cursor's key, and the infix of
    /// `day_aggregate`'s `built_<name>_id` and `newest_<name>_id`.
    static var name: String { get }
    static var table: String { get }
    /// What its rows are called in reports and events (`"heart_rates"`): a JSON key.
    static var rowsName: String { get }
    /// SQL applied once, in order, to a file that has not had them (`agent_state` counts them
    /// per kind): the table of a kind added after schema 13, its indexes and freshness columns.
    /// The kinds of schema 1-13 have their tables from `Schema` and none here.
    static var migrations: [String] { get }

    /// When it was measured: the day it belongs to.
    static func timeMs(of row: Row) -> Int64
    /// What names the row among pending ones (`IngestRing`): two rows with a key in common are
    /// the same measurement, stored once.
    static func keys(of row: Row) -> [SampleKey]
    /// Whether the table already holds the row by one of its keys (a replay).
    static func isStored(_ row: Row, in db: SQLiteConnection) throws -> Bool
    /// The new row's id, or nil for a duplicate. Inside the caller's transaction.
    static func insert(_ row: Row, into db: SQLiteConnection) throws -> Int64?

    /// Appends the row to a journal slot's body.
    static func encode(_ row: Row, into out: inout JournalWriter)
    /// Reads a row `encode` wrote; `withOrigins` false for a slot written before schema 13.
    static func decode(from input: inout JournalReader, withOrigins: Bool) -> Row?

    /// Rows with `fromMs <= ts_ms < toMs` and an id at most `upToID`, in time order: a day's rows.
    static func forEach(fromMs: Int64, toMs: Int64, upToID: Int64, in db: SQLiteConnection, _ body: (Row) throws -> Void) throws
    /// `limit` rows stored after `afterID`, in the order they were stored, each with its id.
    static func forEach(afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (Row, Int64) throws -> Void) throws
    /// `limit` rows after (`fromMs`, `afterID`) by time, then id, each with its id: a reopen's
    /// copy of the recent ones.
    static func forEach(fromMs: Int64, afterID: Int64, limit: Int, in db: SQLiteConnection, _ body: (Row, Int64) throws -> Void) throws
}

extension SampleKind {
    public static var migrations: [String] { [] }
}

/// A row's name among the pending rows of the journal: its kind, its sensor, and a time or an
/// origin (`StoredHeartRate.origin`).
public struct SampleKey: Hashable, Sendable {
    public var kind: String
    public var sensor: String
    /// Distinguishes keys of one kind by what they are (a time, an origin, a step record's kind).
    public var part: String
    public var value: Int64

    public init(kind: String, sensor: String = "", part: String = "", value: Int64) {
        self.kind = kind
        self.sensor = sensor
        self.part = part
        self.value = value
    }
}
