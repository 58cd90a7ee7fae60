import Foundation

/// Keeping the file within its disk: raw rows pruned oldest first, their pages given back.
extension Store {
    /// Deletes up to `limit` raw rows older than `beforeMs` per table, in short transactions so
    /// ingest never waits long; call repeatedly until it returns 0. Aggregates are kept; kept sleep
    /// epochs (sleep_epoch) go with their beats, day folds (day_fold) with their day's first rows.
    public func pruneRawRows(beforeMs: Int64, limit: Int = 2000) throws -> Int {
        var deleted = 0
        try db.transaction {
            for table in KindTable.all {
                try db.statement(sql: table.pruneBefore).bind(.integer(beforeMs), .integer(Int64(limit))).run()
                deleted += db.changes
            }
            // Kept sleep epochs go with the beats they were computed from.
            try db.statement(
                "DELETE FROM sleep_epoch WHERE start_s IN (SELECT start_s FROM sleep_epoch WHERE start_s < ? ORDER BY start_s LIMIT ?)"
            ).bind(.integer(beforeMs / 1000), .integer(Int64(limit))).run()
            deleted += db.changes
            // A day fold is of no use once its day's rows are going (the day aggregate stays).
            // In SQL: `beforeMs` may be as late as Int64.max ("everything").
            try db.statement("DELETE FROM day_fold WHERE end_ms - 86400000 <= ?").bind(.integer(beforeMs)).run()
            deleted += db.changes
        }
        return deleted
    }

    /// Returns up to `pages` free pages to the file system (auto_vacuum = INCREMENTAL).
    public func releaseFreePages(_ pages: Int = 1000) throws {
        try db.execute("PRAGMA incremental_vacuum(\(pages))")
    }

    /// The time of the oldest raw row, for a size cap that removes the oldest first.
    public func oldestRawTimeMs() throws -> Int64? {
        let statement = try db.statement(sql: Self.oldestRaw)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return statement.int64(0)
    }

    private static let oldestRaw =
        "SELECT min(t) FROM (\(SampleKinds.all.map { "SELECT min(ts_ms) AS t FROM \($0.table)" }.joined(separator: " UNION ALL ")))"

    public struct SpaceReport: Sendable, Equatable {
        /// Bytes of data in the file (pages in use), not counting free pages.
        public var usedBytes: Int64
        public var fileBytes: Int64
        public var freeDiskBytes: Int64?
    }

    public func space() throws -> SpaceReport {
        let pageSize = try db.scalarInt("PRAGMA page_size") ?? 4096
        let pages = try db.scalarInt("PRAGMA page_count") ?? 0
        let freePages = try db.scalarInt("PRAGMA freelist_count") ?? 0
        var stats = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        let free: Int64? = statvfs(directory.isEmpty ? "." : directory, &stats) == 0 ? Int64(stats.f_bavail) * Int64(stats.f_frsize) : nil
        return SpaceReport(usedBytes: (pages - freePages) * pageSize, fileBytes: pages * pageSize, freeDiskBytes: free)
    }
}
