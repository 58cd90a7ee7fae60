/// Reading on the writer connection; the queries themselves are shared with `StoreReader`
/// (StoreReads.swift).
extension Store {
    /// Fixes with `fromMs <= ts_ms < toMs`, in time order (a local day: `LocalDay.bounds`).
    /// `upTo` leaves out rows stored after a `RowCursor` was taken.
    /// Streams them instead, for a whole day without holding it in memory.
    /// Without a cursor it reads every committed row: the ingest journal is folded first.
    public func forEachFix(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredFix) throws -> Void) throws {
        if cursor == nil { foldForReaders() }
        try reads.forEachFix(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    public func fixes(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredFix] {
        var fixes: [StoredFix] = []
        try forEachFix(fromMs: fromMs, toMs: toMs, upTo: cursor) { fixes.append($0) }
        return fixes
    }

    /// Heart-rate notifications with `fromMs <= ts_ms < toMs`, in time order, with their RR intervals.
    public func forEachHeartRate(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredHeartRate) throws -> Void
    ) throws {
        if cursor == nil { foldForReaders() }
        try reads.forEachHeartRate(fromMs: fromMs, toMs: toMs, upTo: cursor, body)
    }

    public func heartRates(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil) throws -> [StoredHeartRate] {
        var samples: [StoredHeartRate] = []
        try forEachHeartRate(fromMs: fromMs, toMs: toMs, upTo: cursor) { samples.append($0) }
        return samples
    }

    /// Where the newest stored rows are: what `rows(after:)` continues from. Rows still in the
    /// ingest journal come after it: they are seen once folded, within `[store] fold_s`.
    public func rowCursor() throws -> RowCursor { try reads.rowCursor() }

    /// Rows stored after `cursor`, in the order they were stored (not time order: a bridge
    /// backlog arrives late), at most `limit` of each kind, and the cursor after them. This is
    /// how the running day aggregates see new data without reading the day again.
    public func rows(after cursor: RowCursor, limit: Int) throws -> NewRows {
        try reads.rows(after: cursor, limit: limit)
    }

    /// Whether any fix, heart-rate notification or step record lies in `[fromMs, toMs)`.
    public func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool {
        foldForReaders()
        return try reads.hasRawData(fromMs: fromMs, toMs: toMs)
    }

    public func dayAggregate(date: String) throws -> StoredDayAggregate? {
        try reads.dayAggregate(date: date)
    }

    /// The newest day with a final aggregate (dates sort as text).
    public func latestFinalAggregateDay() throws -> String? {
        try reads.latestFinalAggregateDay()
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
