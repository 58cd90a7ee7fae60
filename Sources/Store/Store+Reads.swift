/// Reading on the writer connection: the queries are `StoreReads`', the same a `StoreReader` runs.
extension Store: StoreReading {
    /// Runs `body` on the writer connection with every row written so far: the ingest journal is
    /// folded first.
    public func read<T: Sendable>(_ body: @Sendable (StoreReads) throws -> T) throws -> T {
        foldForReaders()
        return try body(reads)
    }

    /// Runs `body` on what the tables hold now, without folding the journal: for rows up to or
    /// after a `RowCursor` (which only ever names folded rows) and for what the journal never
    /// holds (aggregates, workouts, gear, sleep, folds). A fold is a commit; these reads run
    /// every tick.
    public func readStored<T: Sendable>(_ body: @Sendable (StoreReads) throws -> T) throws -> T {
        try body(reads)
    }

    /// Saves a day's aggregate computed from the rows up to `cursor` (`day`'s bounds in Unix ms):
    /// rows of the day stored after the cursor leave it stale (`StoredDayAggregate.isStale`).
    public func saveDayAggregate(_ aggregate: StoredDayAggregate, builtUpTo cursor: RowCursor, dayMs: (start: Int64, end: Int64)) throws {
        ring.dayAggregated()
        try db.statement(
            """
            INSERT INTO day_aggregate (date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix,
                                       built_fix_id, built_hr_id, newest_fix_id, newest_hr_id, built_step_id, newest_step_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                    (SELECT max(id) FROM fix WHERE ts_ms >= ?11 AND ts_ms < ?12),
                    (SELECT max(id) FROM hr_sample WHERE ts_ms >= ?11 AND ts_ms < ?12), ?13,
                    (SELECT max(id) FROM step_record WHERE ts_ms >= ?11 AND ts_ms < ?12))
            ON CONFLICT (date) DO UPDATE SET tz = excluded.tz, payload = excluded.payload, final = excluded.final,
                updated_ms = excluded.updated_ms, published_payload = coalesce(excluded.published_payload, published_payload),
                first_fix = excluded.first_fix, last_fix = excluded.last_fix, built_fix_id = excluded.built_fix_id,
                built_hr_id = excluded.built_hr_id, newest_fix_id = excluded.newest_fix_id, newest_hr_id = excluded.newest_hr_id,
                built_step_id = excluded.built_step_id, newest_step_id = excluded.newest_step_id
            """
        ).bind(
            .text(aggregate.date), .text(aggregate.tz), .text(aggregate.payload), .integer(aggregate.final ? 1 : 0),
            .integer(aggregate.updatedMs), aggregate.publishedPayload.map { .text($0) }, aggregate.firstFix.map { .text($0) },
            aggregate.lastFix.map { .text($0) }, .integer(cursor.fixID), .integer(cursor.heartRateID), .integer(dayMs.start),
            .integer(dayMs.end), .integer(cursor.stepID)
        ).run()
    }

    /// The day's aggregate was computed again up to `cursor` and came out as already stored:
    /// only its freshness changes.
    public func markDayAggregateCurrent(date: String, builtUpTo cursor: RowCursor) throws {
        try db.statement("UPDATE day_aggregate SET built_fix_id = ?, built_hr_id = ?, built_step_id = ? WHERE date = ?")
            .bind(.integer(cursor.fixID), .integer(cursor.heartRateID), .integer(cursor.stepID), .text(date)).run()
    }
}
