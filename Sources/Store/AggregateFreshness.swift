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

    mutating func added(fixID: Int64, timeMs: Int64) {
        let day = self.day(of: timeMs)
        newest[day, default: RowCursor()].fixID = max(newest[day]?.fixID ?? 0, fixID)
    }

    mutating func added(heartRateID: Int64, timeMs: Int64) {
        let day = self.day(of: timeMs)
        newest[day, default: RowCursor()].heartRateID = max(newest[day]?.heartRateID ?? 0, heartRateID)
    }

    mutating func added(stepID: Int64, timeMs: Int64) {
        let day = self.day(of: timeMs)
        newest[day, default: RowCursor()].stepID = max(newest[day]?.stepID ?? 0, stepID)
    }

    /// Records the newest ids in the days' aggregate rows, inside the caller's transaction.
    /// Row ids are reused once a table has been emptied (retention): an id at or below the one
    /// an aggregate was built up to then lowers that mark, so the aggregate still reads as stale.
    func record(in db: SQLiteConnection) throws {
        for (day, ids) in newest {
            try db.statement(
                """
                UPDATE day_aggregate SET
                    newest_fix_id = max(coalesce(newest_fix_id, 0), ?1),
                    built_fix_id = CASE WHEN ?1 > 0 AND built_fix_id >= ?1 THEN ?1 - 1 ELSE built_fix_id END,
                    newest_hr_id = max(coalesce(newest_hr_id, 0), ?2),
                    built_hr_id = CASE WHEN ?2 > 0 AND built_hr_id >= ?2 THEN ?2 - 1 ELSE built_hr_id END,
                    newest_step_id = max(coalesce(newest_step_id, 0), ?4),
                    built_step_id = CASE WHEN ?4 > 0 AND built_step_id >= ?4 THEN ?4 - 1 ELSE built_step_id END
                WHERE date = ?3
                """
            ).bind(.integer(ids.fixID), .integer(ids.heartRateID), .text(day), .integer(ids.stepID)).run()
        }
    }

    private mutating func day(of timeMs: Int64) -> String {
        if let current, current.start <= timeMs, timeMs < current.end { return current.day }
        let day = LocalDay(containing: Date(unixMs: timeMs), timeZone: timeZone)
        let bounds = day.boundsMs
        current = (day.description, bounds.start, bounds.end)
        return day.description
    }
}
