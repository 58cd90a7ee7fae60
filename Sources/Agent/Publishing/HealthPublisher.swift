import Foundation
import Logging
import ServiceLifecycle
import Store

/// Publishes `<root>/health/today` (the running aggregate of the current local day, retained,
/// on change, at most every `today_interval_s`) and `<root>/health/daily/<date>` (retained,
/// once the day has ended plus `daily_grace_s`, and again whenever late data changes it).
///
/// Incremental: every few seconds it reads only the rows stored since its cursor and folds them
/// into the open days (today, and yesterday during its grace time). A row for an older day (a
/// bridge backlog, a replay) marks that day for a rebuild from the store; so does a row older
/// than what an open day has already folded in. At start it rebuilds the open days once and
/// publishes the days that ended while the agent was off.
///
/// Days are cut on a clock it trusts: the system clock once synchronised, or before that the
/// system clock corrected by the newest GPS-timed fix. With neither it waits.
actor HealthPublisher: Service, CustomStringConvertible {
    private let topicRoot: String
    private let settings: AggregateSettings
    private let todayInterval: Duration
    private let dailyGraceMs: Int64
    private let store: Store
    private let writer: SampleWriter
    private let clock: AgentClock
    private let pollInterval: Duration
    private let logger: Logger

    private var cursor = RowCursor()
    private var openDays: [LocalDay: DayAggregate] = [:]
    /// Finished days that got late rows (or open days that got rows out of order).
    private var staleDays: Set<LocalDay> = []
    private var lastToday: (text: String, at: ContinuousClock.Instant)?
    /// When the ingest journal was last folded for `health/today` (see `tick`).
    private var lastFoldForToday: ContinuousClock.Instant?
    private var lastDaily: [LocalDay: ContinuousClock.Instant] = [:]
    /// The step anomalies last logged per day, so each is logged when it grows, not every tick.
    private var loggedStepAnomalies: [LocalDay: [String: Int]] = [:]
    /// Today's night and when it was classified (`SleepNight.todayRefresh`).
    private var todaySleep: (day: LocalDay, at: ContinuousClock.Instant, cursor: RowCursor, night: SleepNight)?
    /// Its own read-only connection (`read`).
    private var reader: StoreReader?
    /// The day of the last row folded (`dayOf`).
    private var lastDay: (day: LocalDay, bounds: (start: Int64, end: Int64), nextNightStartMs: Int64)?

    /// Days further back than this are not caught up at start (nor rebuilt for late data).
    static let maximumCatchUpDays = 400
    /// Today's night is classified again within `SleepNight.todayRefresh` once this many
    /// notifications arrived since (15 minutes of a strap's), at most every `backlogRefresh`.
    static let backlogRows: Int64 = 900
    static let backlogRefresh = Duration.seconds(30)
    static let rowsPerRead = 1000

    init(
        topicRoot: String, settings: AggregateSettings, todayIntervalS: Int, dailyGraceS: Int, store: Store,
        writer: SampleWriter, clock: AgentClock, pollInterval: Duration = .seconds(2), logger: Logger
    ) {
        self.topicRoot = topicRoot
        self.settings = settings
        todayInterval = .seconds(todayIntervalS)
        dailyGraceMs = Int64(dailyGraceS) * 1000
        self.store = store
        self.writer = writer
        self.clock = clock
        self.pollInterval = pollInterval
        self.logger = logger
    }

    nonisolated var description: String { "HealthPublisher" }

    func run() async throws {
        var now = clock.trustedNow()
        while now == nil {
            guard await sleepUnlessShuttingDown(for: .seconds(5)) else { return }
            now = clock.trustedNow()
        }
        guard let startTime = now else { return }
        do {
            try await start(at: startTime)
        } catch {
            logger.error("cannot read the store to build the day aggregates", metadata: ["error": "\(error)"])
        }
        while await sleepUnlessShuttingDown(for: pollInterval) {
            guard let now = clock.trustedNow() else { continue }
            do {
                try await tick(at: now)
            } catch {
                logger.warning("health aggregates not updated", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: - Steps

    private func start(at now: Date) async throws {
        cursor = try await store.readStored { try $0.rowCursor() }
        let today = LocalDay(containing: now, timeZone: settings.timeZone)
        try await open(today)
        let yesterday = today.previous
        if try await store.readStored({ try $0.dayAggregate(date: yesterday.description) })?.final != true, !isPastGrace(yesterday, now: now) {
            try await open(yesterday)
        }
        try await catchUp(before: today, now: now)
    }

    /// Publishes the finished days with data and no final aggregate: the agent was off when
    /// they ended. From the day after the newest final aggregate (or the oldest data) on.
    private func catchUp(before today: LocalDay, now: Date) async throws {
        var day: LocalDay
        if let latest = try await store.readStored({ try $0.latestFinalAggregateDay() }), let parsed = LocalDay(latest, timeZone: settings.timeZone) {
            day = parsed.next
        } else if let oldestMs = try await store.oldestRawTimeMs() {
            day = LocalDay(containing: Date(unixMs: oldestMs), timeZone: settings.timeZone)
        } else {
            return
        }
        let earliest = Self.day(today, minus: Self.maximumCatchUpDays)
        if day < earliest { day = earliest }
        var published = 0
        while day < today, openDays[day] == nil, isPastGrace(day, now: now) {
            let bounds = day.boundsMs
            if try await store.read({ try $0.hasRawData(fromMs: bounds.start, toMs: bounds.end) }) {
                let aggregate = try rebuild(day)
                if try await publishDaily(aggregate, nowMs: now.unixMs) { published += 1 }
            }
            day = day.next
        }
        if published > 0 { logger.info("published the days that ended while the agent was off", metadata: ["days": "\(published)"]) }
    }

    private func tick(at now: Date) async throws {
        // `health/today` is never behind the store: once per today_interval_s the ingest
        // journal's windows are folded into the tables before the rows are read, so the
        // publication counts every stored sample, whatever `[store] fold_s` (at the defaults,
        // both 60 s, this is the fold that would have come anyway).
        if lastFoldForToday.map({ ContinuousClock.now - $0 >= todayInterval }) ?? true {
            await store.foldForReaders()
            lastFoldForToday = .now
        }
        try await readNewRows()
        let nowMs = now.unixMs
        let today = LocalDay(containing: now, timeZone: settings.timeZone)
        if openDays[today] == nil { try await open(today) }

        for day in staleDays.sorted() where openDays[day] != nil {
            try await open(day)
            staleDays.remove(day)
        }
        for (day, aggregate) in openDays where day != today && isPastGrace(day, now: now) {
            _ = try await publishDaily(aggregate, nowMs: nowMs)
            openDays[day] = nil
        }
        // Late data for a finished day: rebuilt and republished if it changed, at most once per
        // today_interval_s per day while a backlog streams in.
        for day in staleDays.sorted() where day < today && openDays[day] == nil {
            if let last = lastDaily[day], ContinuousClock.now - last < todayInterval { continue }
            let aggregate = try rebuild(day)
            if try await publishDaily(aggregate, nowMs: nowMs) {
                logger.info("late data changed a finished day; republished", metadata: ["date": "\(day)"])
            }
            staleDays.remove(day)
        }
        if let aggregate = openDays[today] { try await publishToday(aggregate, nowMs: nowMs) }
    }

    /// Folds the rows stored since the cursor into the open days; rows for other days, or out of
    /// order, mark their day stale.
    private func readNewRows() async throws {
        while true {
            let batch = try await store.readStored { [cursor] in try $0.rows(after: cursor, limit: Self.rowsPerRead) }
            cursor = batch.cursor
            DayFeedingKinds.forEachRow(in: batch.rows) { timeMs, add in fold(timeMs: timeMs, add) }
            if batch.isLast { return }
        }
    }

    private func fold(timeMs: Int64, _ add: (inout DayAggregate) -> Bool) {
        let (day, nextNightStartMs) = dayOf(timeMs)
        // An evening's rows are in the next day's night too (`SleepNight.window`).
        if openDays[day.next] == nil, timeMs >= nextNightStartMs { staleDays.insert(day.next) }
        if var aggregate = openDays[day] {
            if staleDays.contains(day) { return }  // rebuilt from the store anyway
            if add(&aggregate) {
                openDays[day] = aggregate
            } else {
                staleDays.insert(day)
            }
        } else {
            staleDays.insert(day)
        }
    }

    /// The local day of a row's time and where the next day's night starts, remembered for the
    /// day of the last row: a batch is nearly always one day, and the calendar's arithmetic per
    /// row was a fifth of the agent's CPU while a backlog streamed in (issue 32).
    private func dayOf(_ timeMs: Int64) -> (day: LocalDay, nextNightStartMs: Int64) {
        if let lastDay, lastDay.bounds.start <= timeMs, timeMs < lastDay.bounds.end { return (lastDay.day, lastDay.nextNightStartMs) }
        let day = LocalDay(containing: Date(unixMs: timeMs), timeZone: settings.timeZone)
        let nextNightStartMs = SleepNight.window(of: day.next).start
        lastDay = (day, day.boundsMs, nextNightStartMs)
        return (day, nextNightStartMs)
    }

    private func open(_ day: LocalDay) async throws {
        openDays[day] = try rebuild(day)
    }

    // MARK: - Publishing

    private func publishToday(_ aggregate: DayAggregate, nowMs: Int64) async throws {
        logStepAnomalies(aggregate)
        var aggregate = aggregate
        aggregate.sleep = try await sleep(today: aggregate.day, nowMs: nowMs)
        aggregate.workouts = try await store.readStored { [bounds = aggregate.day.boundsMs] in
            try $0.workouts(fromMs: bounds.start, toMs: bounds.end)
        }
        let document = aggregate.document(final: false, nowMs: nowMs)
        let text = document.canonicalText
        if let lastToday {
            guard lastToday.text != text, ContinuousClock.now - lastToday.at >= todayInterval else { return }
        }
        try await writer.publish([
            OutboxDraft(topic: "\(topicRoot)/health/today", retain: true, supersedable: true) { seq in document.json(seq: seq).bytes }
        ])
        lastToday = (text, .now)
    }

    /// Queues `health/daily/<date>` unless the same aggregate was published before; true when queued.
    @discardableResult
    private func publishDaily(_ aggregate: DayAggregate, nowMs: Int64) async throws -> Bool {
        logStepAnomalies(aggregate)
        var aggregate = aggregate
        aggregate.sleep = try await night(aggregate.day)
        aggregate.workouts = try await store.readStored { [bounds = aggregate.day.boundsMs] in
            try $0.workouts(fromMs: bounds.start, toMs: bounds.end)
        }
        let date = aggregate.day.description
        let document = aggregate.document(final: true, nowMs: nowMs)
        let text = document.canonicalText
        let previous = try await store.readStored { try $0.dayAggregate(date: date) }
        guard previous?.publishedPayload != text else {
            // Computed again (late rows that changed nothing): it covers them now.
            if previous?.isStale == true { try await store.markDayAggregateCurrent(date: date, builtUpTo: cursor) }
            return false
        }
        // Queued first, recorded second: a crash in between publishes it again, never not at all.
        try await writer.publish([
            OutboxDraft(topic: "\(topicRoot)/health/daily/\(date)", retain: true) { seq in document.json(seq: seq).bytes }
        ])
        try await store.saveDayAggregate(
            StoredDayAggregate(
                date: date, tz: settings.zoneName, payload: text, final: true, updatedMs: nowMs, publishedPayload: text,
                firstFix: DayReport.endPoint(aggregate.location.first).text, lastFix: DayReport.endPoint(aggregate.location.last).text),
            builtUpTo: cursor, dayMs: aggregate.day.boundsMs)
        lastDaily[aggregate.day] = .now
        return true
    }

    /// Logs what the day's step counting left out or replaced, by reason, when a count grew.
    private func logStepAnomalies(_ aggregate: DayAggregate) {
        let anomalies = aggregate.steps.anomalies
        guard !anomalies.isEmpty else { return }
        var logged = loggedStepAnomalies[aggregate.day] ?? [:]
        for (reason, count) in anomalies where count > logged[reason] ?? 0 {
            logger.warning("step records left out or corrected", metadata: ["date": "\(aggregate.day)", "reason": "\(reason)", "count": "\(count)"])
            logged[reason] = count
        }
        if loggedStepAnomalies.count > 8 { loggedStepAnomalies.removeAll() }
        loggedStepAnomalies[aggregate.day] = logged
    }

    /// Today's night, classified again when its window got rows, at most every `SleepNight.todayRefresh`
    /// (and, while it is in progress, every `todayRefresh` without new rows: a strap taken off ends it).
    private func sleep(today day: LocalDay, nowMs: Int64) async throws -> SleepNight {
        if let todaySleep, todaySleep.day == day {
            let since = ContinuousClock.now - todaySleep.at
            // A backlog landing today (a strap's memory): more than `todayRefresh` of a strap's
            // notifications since, so classify again sooner than a live strap's minutes would.
            let backlog = cursor[HeartRateKind.self] - todaySleep.cursor[HeartRateKind.self] >= Self.backlogRows && since >= Self.backlogRefresh
            if (todaySleep.cursor[HeartRateKind.self] == cursor[HeartRateKind.self] && todaySleep.night.main?.inProgress != true)
                || (since < SleepNight.todayRefresh && !backlog)
            {
                return todaySleep.night
            }
        }
        let night = try await night(day, nowMs: nowMs)
        todaySleep = (day, .now, cursor, night)
        return night
    }

    // MARK: - Reading

    /// The day from its rows stored up to the cursor.
    private func rebuild(_ day: LocalDay) throws -> DayAggregate {
        try read { reader in try DayAggregate.build(day, settings: settings, reader: reader, upTo: cursor) }
    }

    /// The day's night from its rows stored up to the cursor; the epochs it computed are kept.
    private func night(_ day: LocalDay, nowMs: Int64? = nil) async throws -> SleepNight {
        let computed = try read { reader in
            try SleepNight.computeKeeping(day, settings: settings, reader: reader, upTo: cursor, nowMs: nowMs)
        }
        try await store.saveSleepEpochs(computed.fresh)
        if let record = computed.record { try await store.saveSleepNight(record) }
        return computed.night
    }

    /// Reads a day's rows through the publisher's own read-only connection, not the store's actor:
    /// a day of rows read through the writer held up the writer, and the queries waiting for it to
    /// fold its journal (issue 32). Reopened after an error.
    private func read<T>(_ body: (StoreReader) throws -> T) throws -> T {
        do {
            let reader = try reader ?? StoreReader(path: store.path)
            self.reader = reader
            return try reader.snapshot { try body(reader) }
        } catch {
            reader = nil
            throw error
        }
    }

    /// A workout of a finished day was saved or changed: its daily aggregate is published again.
    func workoutsChanged(startingAt timeMs: Int64) {
        let day = LocalDay(containing: Date(unixMs: timeMs), timeZone: settings.timeZone)
        if openDays[day] == nil { staleDays.insert(day) }
    }

    // MARK: - Time

    private func isPastGrace(_ day: LocalDay, now: Date) -> Bool {
        now.unixMs >= day.boundsMs.end + dailyGraceMs
    }



    private static func day(_ day: LocalDay, minus days: Int) -> LocalDay {
        LocalDay(containing: day.start.addingTimeInterval(-Double(days) * 86_400 + 43_200), timeZone: day.timeZone)
    }
}
