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
        try db.statement(sql: Self.saveAggregate).bind([
            .text(aggregate.date), .text(aggregate.tz), .text(aggregate.payload), .integer(aggregate.final ? 1 : 0),
            .integer(aggregate.updatedMs), aggregate.publishedPayload.map { .text($0) }, aggregate.firstFix.map { .text($0) },
            aggregate.lastFix.map { .text($0) }, .integer(dayMs.start), .integer(dayMs.end),
        ] + SampleKinds.all.map { .integer(cursor[name: $0.name]) }).run()
    }

    /// `?1`-`?8` the aggregate, `?9`/`?10` the day's bounds, then each kind's cursor in
    /// `SampleKinds.all` order: built up to the cursor, newest the day's largest row id.
    private static let saveAggregate: String = {
        let kinds = SampleKinds.all.enumerated().map { index, kind in
            (name: kind.name, built: "?\(index + 11)", newest: "(SELECT max(id) FROM \(kind.table) WHERE ts_ms >= ?9 AND ts_ms < ?10)")
        }
        let columns = kinds.map { "built_\($0.name)_id, newest_\($0.name)_id" }.joined(separator: ", ")
        let values = kinds.map { "\($0.built), \($0.newest)" }.joined(separator: ", ")
        let updates = kinds.map { "built_\($0.name)_id = excluded.built_\($0.name)_id, newest_\($0.name)_id = excluded.newest_\($0.name)_id" }
        return """
            INSERT INTO day_aggregate (date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix, \(columns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \(values))
            ON CONFLICT (date) DO UPDATE SET tz = excluded.tz, payload = excluded.payload, final = excluded.final,
                updated_ms = excluded.updated_ms, published_payload = coalesce(excluded.published_payload, published_payload),
                first_fix = excluded.first_fix, last_fix = excluded.last_fix, \(updates.joined(separator: ", "))
            """
    }()

    /// The day's aggregate was computed again up to `cursor` and came out as already stored:
    /// only its freshness changes.
    public func markDayAggregateCurrent(date: String, builtUpTo cursor: RowCursor) throws {
        try db.statement(sql: Self.markCurrent).bind([.text(date)] + SampleKinds.all.map { .integer(cursor[name: $0.name]) }).run()
    }

    private static let markCurrent = """
        UPDATE day_aggregate SET \(SampleKinds.all.enumerated().map { "built_\($1.name)_id = ?\($0 + 2)" }.joined(separator: ", "))
        WHERE date = ?1
        """
}
