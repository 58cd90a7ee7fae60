import Store

/// One local day's aggregate and night kept current through a read-only connection: computed
/// once, then brought up to date with only the rows stored since (by row id). Queries use it, so
/// each answers with every row committed before it (read-your-writes) without reading the whole
/// day again, and the night is classified from the window's notifications held here (with its
/// strap's kept epochs), not read again from the store (issue 32).
struct RunningDay {
    private(set) var aggregate: DayAggregate
    /// The night window's notifications (`SleepNight.window`: 18:00 the evening before to 18:00).
    private(set) var night = NightSamples()
    /// The night strap's kept epoch features, carried from one classification to the next.
    private var epochCache: SleepEpochCache?
    /// The newest notification of the strap whose epochs `prepareNight` last computed: the next
    /// preparation builds only the night's tail from a while before it.
    private var preparedThrough: (sensor: String, timeMs: Int64)?
    /// The window's rows when its notifications were let go (`releaseNight`); nil while held.
    private var releasedNight: RowFingerprint?
    private var cursor: RowCursor
    let window: (start: Int64, end: Int64)

    static let rowsPerRead = 1000

    /// Computes the day inside the caller's snapshot, so the cursor and the rows agree: one read
    /// of the heart rate from the night window's start to the day's end serves both.
    init(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader) throws {
        cursor = try reader.read { try $0.rowCursor() }
        window = SleepNight.window(of: day)
        var aggregate = DayAggregate(day: day, settings: settings)
        var night = NightSamples()
        let bounds = day.boundsMs
        let window = window
        try reader.read { try $0.forEachHeartRate(fromMs: min(bounds.start, window.start), toMs: max(bounds.end, window.end)) { sample in
            if bounds.start <= sample.timeMs, sample.timeMs < bounds.end { _ = aggregate.add(sample) }
            if window.start <= sample.timeMs, sample.timeMs < window.end { _ = night.add(sample) }
        } }
        try aggregate.readAllButHeartRate(reader)
        self.aggregate = aggregate
        self.night = night
    }

    /// A past day resumed from its kept folds and the kept night of its window, whose rows are
    /// `night` (both checked against the store by the caller, in the snapshot `cursor` was taken
    /// in): the night is held as let go (`releaseNight`), and nothing is read.
    init(resuming aggregate: DayAggregate, night: RowFingerprint, cursor: RowCursor) {
        self.aggregate = aggregate
        self.cursor = cursor
        window = SleepNight.window(of: aggregate.day)
        self.night = NightSamples(releasedAt: Int(night.rows))
        releasedNight = night
    }

    /// Whether rows with times in `span` can change it: the night window's start to the day's end.
    func isTouched(by span: (fromMs: Int64, toMs: Int64)) -> Bool {
        let bounds = aggregate.day.boundsMs
        return span.fromMs < max(bounds.end, window.end) && span.toMs >= min(bounds.start, window.start)
    }

    /// Moves past rows stored up to `cursor` that the caller found untouching (`isTouched`).
    mutating func skip(to cursor: RowCursor) { self.cursor = cursor }

    /// Folds in the day's rows stored since the last call; false when one is older than what is
    /// already folded in (a backlog for today): then the day must be computed again.
    mutating func catchUp(reader: StoreReader) throws -> Bool {
        let bounds = aggregate.day.boundsMs
        func inDay(_ timeMs: Int64) -> Bool { bounds.start <= timeMs && timeMs < bounds.end }
        while true {
            let batch = try reader.read { try $0.rows(after: cursor, limit: Self.rowsPerRead) }
            var inOrder = true
            DayFeedingKinds.forEachRow(in: batch.rows) { timeMs, add in
                if inOrder, inDay(timeMs) { inOrder = add(&aggregate) }
            }
            guard inOrder else { return false }
            for sample in batch[HeartRateKind.self] where window.start <= sample.timeMs && sample.timeMs < window.end {
                // A night let go is not patched: the day is computed again.
                guard releasedNight == nil, night.add(sample) else { return false }
            }
            cursor = batch.cursor
            if batch.isLast { return true }
        }
    }

    /// The night as of the rows folded in, computed at `nowMs`; epochs computed with a complete
    /// window go to `keep`.
    mutating func sleep(settings: AggregateSettings, reader: StoreReader, nowMs: Int64?, keep: Keeping) throws -> SleepNight {
        if let released = releasedNight {
            if let kept = try SleepNight.kept(aggregate.day, settings: settings, reader: reader, fingerprint: released) { return kept }
            // Its kept night is gone (a failed write, retention): the window is read again.
            try collectNight(reader: reader)
        }
        let fingerprint = night.fingerprint(windowStartMs: window.start)
        if nowMs.map({ $0 >= window.end }) ?? true,
            let kept = try SleepNight.kept(aggregate.day, settings: settings, reader: reader, fingerprint: fingerprint)
        {
            return kept
        }
        guard let series = night.dominant else { return .none }
        let cache = try epochCache(for: series.sensor, reader: reader)
        let computed = SleepNight.compute(aggregate.day, settings: settings, series: series, nowMs: nowMs, cache: cache)
        keep.keep(cache.takeFresh())
        if let record = computed.keptRecord(aggregate.day, settings: settings, fingerprint: fingerprint, nowMs: nowMs) {
            keep.night?(record)
        }
        return computed
    }

    /// Computes the features of the night's epochs whose window is complete and that are not
    /// kept yet, classifying nothing (`SleepEpochCache.prepare`): while a backlog lands.
    mutating func prepareNight(settings: AggregateSettings, reader: StoreReader, keep: Keeping) throws {
        guard releasedNight == nil, let series = night.dominant, let newest = series.timesMs.last else { return }
        let cache = try epochCache(for: series.sensor, reader: reader)
        // An epoch not complete then starts at most 5 minutes before that notification (its
        // window reaches 270 s past its end); its tail needs 10 minutes before it (`tailContextS`).
        let fromMs = preparedThrough.flatMap { $0.sensor == series.sensor ? $0.timeMs - Self.tailMarginMs : nil }
        for segment in SleepNight.segments(series) {
            cache.prepare(of: series, segment, timeZone: settings.timeZone, gapLimitMs: settings.gapLimitMs, fromMs: fromMs)
        }
        preparedThrough = (series.sensor, newest)
        keep.keep(cache.takeFresh())
    }

    static let tailMarginMs: Int64 = 1_200_000

    /// Lets the night window's notifications and epoch features go, keeping the day's folds: for
    /// a past night classified and kept that no row lands in any more. A strap's backlog of days
    /// then holds the nights still landing, not every day followed (issue 32: a followed night
    /// is 3–7 MiB at a strap's 2 notifications a second). A row landing in the window afterwards
    /// has the day computed again (`catchUp` is false); the night asked again is the kept one.
    mutating func releaseNight() {
        guard releasedNight == nil else { return }
        releasedNight = night.fingerprint(windowStartMs: window.start)
        night = night.released()
        epochCache = nil
        preparedThrough = nil
    }

    var holdsNight: Bool { releasedNight == nil }
    /// Whether it holds any of its night's notifications: what counts toward the nights held.
    var holdsNotifications: Bool { releasedNight == nil && night.count > 0 }

    /// Reads the window's notifications from the store again, at the revision it was let go at
    /// (each notification in the window counted once, as `init` and `catchUp` count them).
    private mutating func collectNight(reader: StoreReader) throws {
        night = try NightSamples(window: window, reader: reader, upTo: cursor)
        releasedNight = nil
    }

    private mutating func epochCache(for sensor: String, reader: StoreReader) throws -> SleepEpochCache {
        if let epochCache, epochCache.sensor == sensor { return epochCache }
        let cache = try SleepEpochCache(sensor: sensor, window: window, reader: reader)
        epochCache = cache
        return cache
    }
}
