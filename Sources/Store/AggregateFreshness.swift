import Foundation
import Supervision

/// Keeps a stored day aggregate honest about late rows (schema 4): every write records, for each
/// local day it added rows to, the newest row id of that day, so a reader can tell whether the
/// aggregate was computed before those rows arrived (`StoredDayAggregate.isStale`) and compute
/// the day from its rows instead of answering from it.
///
/// Only days that already have an aggregate row are touched: the UPDATE for today (which has
/// none until it ends) finds no row and writes no page.
struct AggregateFreshness {
    private let timeZone: TimeZone
    /// The day of the last row seen, with its bounds: a batch is nearly always one day.
    private var current: (day: String, start: Int64, end: Int64)?
    private var newest: [String: RowCursor] = [:]

    init(timeZone: TimeZone) { self.timeZone = timeZone }

    mutating func added(id: Int64, of kind: String, timeMs: Int64) {
        let day = self.day(of: timeMs)
        newest[day, default: RowCursor()][name: kind] = max(newest[day]?[name: kind] ?? 0, id)
    }

    /// Records the newest ids in the days' aggregate rows, inside the caller's transaction.
    /// Row ids are reused once a table has been emptied (retention): an id at or below the one
    /// an aggregate was built up to then lowers that mark, so the aggregate still reads as stale.
    func record(in db: SQLiteConnection) throws {
        for (day, ids) in newest {
            try db.statement(sql: Self.update).bind([.text(day)] + SampleKinds.all.map { .integer(ids[name: $0.name]) }).run()
        }
    }

    /// `?1` the day, then each kind's newest id in `SampleKinds.all` order.
    private static let update: String = {
        let sets = SampleKinds.all.enumerated().map { index, kind in
            let (value, built, newest) = ("?\(index + 2)", "built_\(kind.name)_id", "newest_\(kind.name)_id")
            return """
                \(newest) = max(coalesce(\(newest), 0), \(value)),
                \(built) = CASE WHEN \(value) > 0 AND \(built) >= \(value) THEN \(value) - 1 ELSE \(built) END
                """
        }
        return "UPDATE day_aggregate SET \(sets.joined(separator: ",\n")) WHERE date = ?1"
    }()

    /// The SQL truth of "rows arrived after the aggregate was built", over every kind: the stale
    /// test of `StoredDayAggregate` and of a reopen's copy.
    static let staleExpression = SampleKinds.all.map { kind in
        "coalesce(newest_\(kind.name)_id > coalesce(built_\(kind.name)_id, 0), 0)"
    }.joined(separator: " OR ")

    private mutating func day(of timeMs: Int64) -> String {
        if let current, current.start <= timeMs, timeMs < current.end { return current.day }
        let day = LocalDay(containing: Date(unixMs: timeMs), timeZone: timeZone)
        let bounds = day.boundsMs
        current = (day.description, bounds.start, bounds.end)
        return day.description
    }
}
