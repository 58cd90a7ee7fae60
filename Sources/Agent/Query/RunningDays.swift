import Foundation
import Store

/// The days a `QueryEngine` answers from their rows — today, and days without a current stored
/// aggregate (a backlog landing in them) — carried from one query to the next with the nights
/// classified for them, and followed between queries (issue 32): every few seconds `follow`
/// folds the rows stored since into them and starts following a past day that new rows arrive
/// for, so the first query after a strap's backlog finds its day folded and its night classified.
///
/// Not thread-safe: its engine's queue owns it.
struct RunningDays {
    private var days: [LocalDay: RunningDay] = [:]
    private var nights: [LocalDay: ClassifiedNight] = [:]
    /// Where `follow` looked last.
    private var followed: RowCursor?
    /// When `follow` last computed a landing day's complete epochs.
    private var prepared: [LocalDay: ContinuousClock.Instant] = [:]
    /// The rows of each day whose folds were last handed to be kept.
    private var keptFolds: [LocalDay: [RowFingerprint]] = [:]
    /// Since when each past day's night window has taken no notification.
    private var nightQuietSince: [LocalDay: ContinuousClock.Instant] = [:]

    /// A night, the revision of its window's notifications it was classified at, and when.
    private struct ClassifiedNight {
        var at: ContinuousClock.Instant
        var revision: Int?
        var night: SleepNight
    }

    /// Days holding their night window's notifications (3–7 MiB each at a strap's rate).
    static let maximumNightsHeld = 4
    /// Days in all: one whose night was let go holds its folds alone (tens of KiB), so a month of
    /// days a backlog filled is answered without resuming them again query after query.
    static let maximumDays = 32

    /// Whether `day` is followed, and whether its night is classified at its window's current revision.
    func isFollowed(_ day: LocalDay) -> Bool { days[day] != nil }
    /// Whether a followed day holds its night window's notifications (nil: not followed).
    func holdsNight(_ day: LocalDay) -> Bool? { days[day]?.holdsNight }
    /// How many days hold notifications of their night window (at most `maximumNightsHeld` after a round).
    var nightsHeld: Int { days.values.filter(\.holdsNotifications).count }
    var followedCount: Int { days.count }
    func hasCurrentNight(_ day: LocalDay) -> Bool {
        guard let revision = days[day]?.night.revision else { return false }
        return nights[day]?.revision == revision
    }

    mutating func removeAll() {
        days = [:]
        nights = [:]
        followed = nil
        prepared = [:]
        keptFolds = [:]
        nightQuietSince = [:]
    }

    /// The day as of the current snapshot: its running aggregate brought up to date, or computed
    /// anew (first asked, a row out of order).
    /// A past day (`resumable`) not followed is resumed from its kept folds and night when they
    /// still hold (`resume`).
    mutating func aggregate(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader, resumable: Bool = false) throws -> DayAggregate {
        if var carried = days[day], try carried.catchUp(reader: reader) {
            days[day] = carried
            // Workouts are not rows it folds: read again (an indexed range).
            var aggregate = carried.aggregate
            aggregate.workouts = try reader.read { try $0.workouts(fromMs: day.boundsMs.start, toMs: day.boundsMs.end) }
            return aggregate
        }
        if resumable, days[day] == nil, let resumed = try resume(day, settings: settings, reader: reader) { return resumed.aggregate }
        return try start(day, settings: settings, reader: reader).aggregate
    }

    /// `day` from its kept folds and kept night, if the agent kept both and they still match the
    /// day's rows and the settings: followed from here on holding its folds alone, its night
    /// classified, neither its rows nor its night window read (a query for a day a backlog
    /// filled, after the query service let it go or the agent restarted).
    private mutating func resume(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader) throws -> RunningDay? {
        let cursor = try reader.read { try $0.rowCursor() }
        let rows = try DayAndNightRows(day, reader: reader)
        guard let night = try SleepNight.kept(day, settings: settings, reader: reader, fingerprint: rows.night),
            let aggregate = try DayAggregate.kept(day, settings: settings, reader: reader, heartRate: rows.day)
        else { return nil }
        let resumed = RunningDay(resuming: aggregate, night: rows.night, cursor: cursor)
        hold(day, resumed)
        keptFolds[day] = aggregate.foldedRows
        nights[day] = ClassifiedNight(at: .now, revision: resumed.night.revision, night: night)
        return resumed
    }

    /// `day`'s night. Classified again when its window took notifications since — for today, whose
    /// strap adds one a second, at most every `SleepNight.todayRefresh` — and while it is in
    /// progress every `todayRefresh` (a strap taken off ends it without a new row).
    mutating func night(
        _ day: LocalDay, settings: AggregateSettings, reader: StoreReader, nowMs: Int64, isToday: Bool, keep: Keeping
    ) throws -> SleepNight {
        let revision = days[day]?.night.revision
        if let kept = nights[day] {
            let young = ContinuousClock.now - kept.at < SleepNight.todayRefresh
            let unchanged = revision != nil && kept.revision == revision
            if (unchanged && (young || kept.night.main?.inProgress != true)) || (isToday && young) { return kept.night }
        }
        return try classify(day, settings: settings, reader: reader, nowMs: nowMs, keep: keep)
    }

    /// Folds the rows stored since the last call into the days followed, starts following the
    /// past days they arrived for, and classifies the night of a past day whose window took rows
    /// and then none in this round (the backlog is in). True when there were new rows, or work
    /// left for a query waiting (`queriesWaiting`): call again soon.
    mutating func follow(
        settings: AggregateSettings, reader: StoreReader, today: LocalDay, nowMs: Int64, keep: Keeping,
        yieldTo queriesWaiting: () -> Bool = { false }
    ) throws -> Bool {
        let current = try reader.read { try $0.rowCursor() }
        defer { followed = current }
        guard let from = followed else { return false }
        let revisions = days.mapValues(\.night.revision)
        let folded = days.mapValues(\.aggregate.foldedRows)
        let span = current != from ? try reader.read { try $0.span(ofRowsAfter: from) } : nil
        for day in days.keys.sorted() {
            guard var carried = days[day] else { continue }
            if let span, carried.isTouched(by: span) {
                days[day] = try carried.catchUp(reader: reader) ? carried : nil
            } else {
                // None of the new rows is its: a month of settled days costs no read.
                carried.skip(to: current)
                days[day] = carried
            }
        }
        if let span {
            for day in Self.pastDays(touchedBy: span, timeZone: settings.timeZone, today: today) where days[day] == nil {
                try start(day, settings: settings, reader: reader)
            }
        }
        dropNightsBeyondLimit()
        for day in days.keys.sorted() where day < today {
            guard !queriesWaiting() else { return true }
            guard var carried = days[day] else { continue }
            if revisions[day] != carried.night.revision { nightQuietSince[day] = nil }
            if folded[day] == carried.aggregate.foldedRows, keptFolds[day] != carried.aggregate.foldedRows,
                let record = carried.aggregate.keptRecord(settings: settings)
            {
                // Its rows quiet this round: keep its folds for a query after the agent stops.
                keep.dayFold?(record)
                keptFolds[day] = carried.aggregate.foldedRows
            }
            if revisions[day] == carried.night.revision {
                // Quiet this round: classify the night if it is not classified at this revision.
                if nights[day]?.revision != carried.night.revision {
                    _ = try classify(day, settings: settings, reader: reader, nowMs: nowMs, keep: keep)
                }
                let quietSince = nightQuietSince[day] ?? .now
                nightQuietSince[day] = quietSince
                if let classified = nights[day], classified.revision == carried.night.revision, classified.night.main?.inProgress != true,
                    (span.map { $0.fromMs >= carried.window.end } ?? false) || ContinuousClock.now - quietSince >= Self.settleAfter
                {
                    // The backlog has moved past its night, or stopped: hold its folds, not its window.
                    days[day]?.releaseNight()
                }
            } else if prepared[day].map({ ContinuousClock.now - $0 >= Self.preparePeriod }) ?? true {
                // Still landing: compute the epochs complete so far, at most once a period.
                try carried.prepareNight(settings: settings, reader: reader, keep: keep)
                days[day] = carried
                prepared[day] = .now
            }
        }
        return current != from
    }

    /// While a backlog lands in a day, its complete epochs are computed at most this often (each
    /// time builds the beats of the night's last 20 minutes or so: `RunningDay.prepareNight`).
    static let preparePeriod = Duration.milliseconds(500)

    /// A past night classified and kept whose window took nothing this long is let go
    /// (`RunningDay.releaseNight`), as it is at once when the rows landing are all past it.
    static let settleAfter = Duration.seconds(5)

    /// The past days (before `today`) whose day or night window holds a time in `span`, the
    /// newest `maximumNightsHeld`.
    static func pastDays(touchedBy span: (fromMs: Int64, toMs: Int64), timeZone: TimeZone, today: LocalDay) -> [LocalDay] {
        var day = LocalDay(containing: Date(unixMs: span.fromMs), timeZone: timeZone)
        // An evening's rows are in the next day's night too (`SleepNight.window`).
        var last = LocalDay(containing: Date(unixMs: span.toMs), timeZone: timeZone)
        if span.toMs >= SleepNight.window(of: last.next).start { last = last.next }
        var touched: [LocalDay] = []
        while day <= last, day < today {
            touched.append(day)
            day = day.next
        }
        return Array(touched.suffix(maximumNightsHeld))
    }

    @discardableResult
    private mutating func start(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader) throws -> RunningDay {
        let fresh = try RunningDay(day, settings: settings, reader: reader)
        hold(day, fresh)
        return fresh
    }

    /// Holds `running` for `day`, letting the oldest day go to stay within `maximumNightsHeld`
    /// and `maximumDays`.
    private mutating func hold(_ day: LocalDay, _ running: RunningDay) {
        drop(day)
        if days.count >= Self.maximumDays, let oldest = days.keys.min() { drop(oldest) }
        days[day] = running
        dropNightsBeyondLimit(keeping: day)
    }

    /// Lets the oldest days holding notifications go, but `keeping`, until `maximumNightsHeld`
    /// hold any. A day asked for with none in its window (most past days) holds nothing, but
    /// rows can land in it later: checked again after each round's catch-up.
    private mutating func dropNightsBeyondLimit(keeping: LocalDay? = nil) {
        while nightsHeld > Self.maximumNightsHeld,
            let oldest = days.filter({ $0.key != keeping && $0.value.holdsNotifications }).keys.min()
        {
            drop(oldest)
        }
    }

    private mutating func drop(_ day: LocalDay) {
        days[day] = nil
        nights[day] = nil
        prepared[day] = nil
        keptFolds[day] = nil
        nightQuietSince[day] = nil
    }

    private mutating func classify(
        _ day: LocalDay, settings: AggregateSettings, reader: StoreReader, nowMs: Int64, keep: Keeping
    ) throws -> SleepNight {
        let night: SleepNight
        if var carried = days[day] {
            // The running day holds the window's notifications: nothing to read again.
            night = try carried.sleep(settings: settings, reader: reader, nowMs: nowMs, keep: keep)
            days[day] = carried
        } else {
            night = try SleepNight.compute(day, settings: settings, reader: reader, nowMs: nowMs, keep: keep)
        }
        if nights[day] == nil, nights.count >= Self.maximumDays + Self.maximumNightsHeld { nights.removeAll() }
        nights[day] = ClassifiedNight(at: .now, revision: days[day]?.night.revision, night: night)
        return night
    }
}
