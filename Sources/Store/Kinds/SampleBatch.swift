/// Rows of any kinds, kept by kind: what one write stores, one journal window holds, and one
/// read after a cursor returns. `batch[HeartRateKind.self]` is that kind's rows, in order.
public struct SampleBatch: Sendable, Equatable {
    private var byKind: [String: any SampleRows] = [:]

    public init() {}

    public subscript<Kind: SampleKind>(_ kind: Kind.Type) -> [Kind.Row] {
        get { (byKind[Kind.name] as? KindRows<Kind>)?.rows ?? [] }
        set { byKind[Kind.name] = newValue.isEmpty ? nil : KindRows<Kind>(rows: newValue) }
    }

    /// The rows of every kind present, in `SampleKinds.all` order.
    var kinds: [any SampleRows] { SampleKinds.all.compactMap { byKind[$0.name] } }

    mutating func set(_ rows: any SampleRows) { byKind[rows.name] = rows.count == 0 ? nil : rows }

    public var count: Int { byKind.values.reduce(0) { $0 + $1.count } }
    public var isEmpty: Bool { byKind.isEmpty }

    /// The rows of `other` after this batch's, kind by kind.
    public mutating func append(contentsOf other: SampleBatch) {
        for rows in other.byKind.values {
            // Taken out first, so the array is not shared while it grows (a writer's pending rows).
            guard var mine = byKind.removeValue(forKey: rows.name) else {
                byKind[rows.name] = rows
                continue
            }
            mine.append(rows)
            byKind[rows.name] = mine
        }
    }

    /// Every row's time lies at or after `floorMs`.
    func allAtOrAfter(_ floorMs: Int64) -> Bool { byKind.values.allSatisfy { $0.allAtOrAfter(floorMs) } }

    public static func == (lhs: SampleBatch, rhs: SampleBatch) -> Bool {
        lhs.byKind.count == rhs.byKind.count
            && lhs.byKind.allSatisfy { name, rows in rhs.byKind[name].map { rows.isEqual(to: $0) } ?? false }
    }
}

/// One kind's rows of a `SampleBatch`, with what the store does to rows of any kind.
protocol SampleRows: Sendable {
    var name: String { get }
    var count: Int { get }
    func isEqual(to other: any SampleRows) -> Bool
    mutating func append(_ other: any SampleRows)
    func allAtOrAfter(_ floorMs: Int64) -> Bool
    /// Each row's keys, in order (`SampleKind.keys`).
    func keys() -> [SampleKey]
    /// The rows not named by `isSeen` (pending in the ring, or earlier in this batch) and not in
    /// the table: what a write adds. `seen` gets the keys of the rows kept.
    func unseen(in db: SQLiteConnection, isSeen: (SampleKey) -> Bool, seen: inout Set<SampleKey>) throws -> any SampleRows
    /// Inserts every row; `added` gets each new row's id and time.
    func insert(into db: SQLiteConnection, added: (_ id: Int64, _ timeMs: Int64) -> Void) throws -> Int
    func encode(into out: inout JournalWriter)
}

struct KindRows<Kind: SampleKind>: SampleRows {
    var rows: [Kind.Row]

    var name: String { Kind.name }
    var count: Int { rows.count }

    func isEqual(to other: any SampleRows) -> Bool { (other as? Self)?.rows == rows }

    mutating func append(_ other: any SampleRows) {
        if let other = other as? Self { rows += other.rows }
    }

    func allAtOrAfter(_ floorMs: Int64) -> Bool { rows.allSatisfy { Kind.timeMs(of: $0) >= floorMs } }

    func keys() -> [SampleKey] { rows.flatMap { Kind.keys(of: $0) } }

    func unseen(in db: SQLiteConnection, isSeen: (SampleKey) -> Bool, seen: inout Set<SampleKey>) throws -> any SampleRows {
        var kept: [Kind.Row] = []
        for row in rows {
            let keys = Kind.keys(of: row)
            guard !keys.contains(where: { isSeen($0) || seen.contains($0) }) else { continue }
            guard try !Kind.isStored(row, in: db) else { continue }
            seen.formUnion(keys)
            kept.append(row)
        }
        return KindRows(rows: kept)
    }

    func insert(into db: SQLiteConnection, added: (Int64, Int64) -> Void) throws -> Int {
        var inserted = 0
        for row in rows {
            guard let id = try Kind.insert(row, into: db) else { continue }
            inserted += 1
            added(id, Kind.timeMs(of: row))
        }
        return inserted
    }

    func encode(into out: inout JournalWriter) {
        for row in rows { Kind.encode(row, into: &out) }
    }

    /// `count` rows read back from a slot.
    static func decode(count: Int, from input: inout JournalReader, withOrigins: Bool) -> KindRows? {
        var rows: [Kind.Row] = []
        rows.reserveCapacity(count)
        for _ in 0..<count {
            guard let row = Kind.decode(from: &input, withOrigins: withOrigins) else { return nil }
            rows.append(row)
        }
        return KindRows(rows: rows)
    }
}

extension SampleKind {
    /// `count` of this kind's rows read back from a journal slot.
    static func decodeRows(count: Int, from input: inout JournalReader, withOrigins: Bool) -> (any SampleRows)? {
        KindRows<Self>.decode(count: count, from: &input, withOrigins: withOrigins)
    }
}
