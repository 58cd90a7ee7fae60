import Foundation
import Logging
import Store

/// Answers per-date requests from the store, through its own read-only connection: the same
/// code behind `selection/date` and `keepalive query`.
///
/// Not thread-safe: the agent runs it on one serial queue, off the ingest path.
final class QueryEngine {
    let storePath: String
    let settings: AggregateSettings
    let maxReplyBytes: Int
    let creator: String
    private var reader: StoreReader?
    /// Today and the days without a current stored aggregate, carried between queries and
    /// followed between them (`follow`): each query folds in only the rows stored since (issue 32).
    private(set) var running = RunningDays()
    /// Where sleep epochs, finished nights and day folds this engine computed are kept (the
    /// agent's writer); nothing for the command line, which only reads the store.
    var keeping = Keeping.nothing
    /// Whether it carries the days it computes from one query to the next (the agent's engines).
    /// The command line answers once: a stale day whose night the agent kept unchanged is then
    /// read from the day's kept folds (`DayAggregate.kept`), else its rows alone, with that night
    /// (`SleepNight.kept`), without its night window.
    var carriesDays = true

    static let fiveMinutesMs: Int64 = 300_000

    init(storePath: String, settings: AggregateSettings, maxReplyBytes: Int, deviceID: String) {
        self.storePath = storePath
        self.settings = settings
        self.maxReplyBytes = maxReplyBytes
        creator = "keepalive \(KeepAliveVersion.string) (\(deviceID))"
    }

    /// The one reply to `request`.
    func answer(_ request: QueryRequest, now: Date) -> QueryReply {
        // With scanning allowed there is always a reply.
        answer(request, now: now, mayScan: true) ?? QueryError(code: .internal, message: "no reply").reply
    }

    /// The reply to `request` if it takes only indexed lookups (a finished day's stored
    /// aggregate that still covers every row of its day, and keeps its first and last fix), nil
    /// if it needs to read rows: a track, heart-rate minutes, today, a day without a current
    /// final aggregate.
    func quickAnswer(_ request: QueryRequest, now: Date) -> QueryReply? {
        guard request.format == .json, request.include.isDisjoint(with: [.track, .hr, .timeline, .workouts]) else { return nil }
        return answer(request, now: now, mayScan: false)
    }

    /// Thrown where answering would read a day's rows and that was not allowed.
    private struct ScanNeeded: Error {}

    private func answer(_ request: QueryRequest, now: Date, mayScan: Bool) -> QueryReply? {
        do {
            let day = try day(of: request.date, now: now)
            let wantsTrack = request.include.contains(.track) || request.format != .json
            let report = try report(
                day, include: request.include, track: wantsTrack ? request.track : nil, heartRateTimeline: request.format == .gpx,
                now: now, mayScan: mayScan)
            let reply: QueryReply
            switch request.format {
            case .json:
                reply = QueryReply(body: ReplyDocument.json(report, include: request.include).bytes, contentType: QueryReply.json, status: 200)
            case .geojson:
                reply = QueryReply(body: GeoJSONDocument.collection([report]).bytes, contentType: QueryReply.geoJSON, status: 200)
            case .gpx:
                let document = GPXWriter.header(creator: creator, name: "\(day)") + report.gpxTrack + GPXWriter.footer
                reply = QueryReply(body: Array(document.utf8), contentType: QueryReply.gpx, status: 200)
            }
            guard reply.body.count <= maxReplyBytes else {
                throw QueryError(
                    code: .tooLarge,
                    message: "the reply would be \(reply.body.count) bytes, over query.max_reply_bytes (\(maxReplyBytes)); ask for less: leave out \"hr\" and \"track\", or use \"track\":\"5min\"")
            }
            return reply
        } catch let error as QueryError {
            return error.reply
        } catch is ScanNeeded {
            return nil
        } catch {
            reader = nil  // reopened on the next request
            running.removeAll()
            return QueryError(code: .internal, message: "cannot read the store: \(error)").reply
        }
    }

    /// The local day named by `text`: a real date, not after the agent's today — unless the store
    /// holds data stamped on it (fixes dated by a GPS ahead of a clock not yet set are answered
    /// on the clock that stamped them).
    func day(of text: String, now: Date) throws -> LocalDay {
        guard let day = LocalDay(text, timeZone: settings.timeZone) else {
            throw QueryError(code: .invalidDate, message: "\"\(text.prefix(40))\" is not a date (YYYY-MM-DD)")
        }
        let bounds = day.boundsMs
        guard try bounds.start <= now.unixMs || openReader().read({ try $0.hasRawData(fromMs: bounds.start, toMs: bounds.end) }) else {
            let today = LocalDay(containing: now, timeZone: settings.timeZone)
            throw QueryError(code: .futureDate, message: "\(day) is after today (\(today) in \(settings.zoneName))")
        }
        return day
    }


    func report(
        _ day: LocalDay, include: Set<QueryRequest.Part>, track: QueryRequest.TrackDetail?, heartRateTimeline: Bool, now: Date,
        mayScan: Bool = true
    ) throws -> DayReport {
        let reader = try openReader()
        return try reader.snapshot {
            try report(
                day, include: include, track: track, heartRateTimeline: heartRateTimeline, now: now, mayScan: mayScan, reader: reader)
        }
    }

    /// Read-your-writes: every answer reflects every row committed before the snapshot it reads.
    /// A finished day is answered from its stored final aggregate only while that still covers
    /// all the day's rows (no late rows since: `isStale`); otherwise, and for any day without
    /// one, the day is computed from its rows. Such a day (today, or one
    /// a backlog is landing in) comes from `running` (`RunningDays`), which folds in
    /// only the rows stored since the previous query.
    private func report(
        _ day: LocalDay, include: Set<QueryRequest.Part>, track: QueryRequest.TrackDetail?, heartRateTimeline: Bool, now: Date,
        mayScan: Bool, reader: StoreReader
    ) throws -> DayReport {
        let bounds = day.boundsMs
        let nowMs = now.unixMs
        let isToday = bounds.start <= nowMs && nowMs < bounds.end
        let stored = isToday ? nil : try reader.read { try $0.dayAggregate(date: day.description) }
        // A stored aggregate whose JSON rotted on the card is not spliced into a reply: the day is
        // computed from its rows instead, as if nothing were stored.
        let current = try stored.flatMap { try $0.final && !$0.isStale && Self.intact($0, reader: reader) ? $0 : nil }
        // Computed from the rows when no current stored aggregate answers (once, for health and
        // location). Only what the reply carries: the night only for health, only the fixes for
        // location alone (issue 32).
        var computed: DayAggregate?
        func aggregate() throws -> DayAggregate {
            if let computed { return computed }
            guard mayScan else { throw ScanNeeded() }
            let built = try running.aggregate(day, settings: settings, reader: reader, resumable: !isToday && include.contains(.health))
            computed = built
            return built
        }
        func fixesOnly() throws -> LocationAccumulator {
            if let computed { return computed.location }
            if isToday { return try aggregate().location }
            guard mayScan else { throw ScanNeeded() }
            return try DayAggregate.location(day, settings: settings, reader: reader)
        }
        // A stored aggregate with samples or fixes settles it without looking at the raw rows.
        let hasData = try current.map { Self.aggregateHasData($0.payload) } == true
            || reader.read { try $0.hasRawData(fromMs: bounds.start, toMs: bounds.end) }

        var health: JSONValue = .null
        if include.contains(.health) {
            if let current {
                health = .raw(current.payload)
            } else if !carriesDays, !isToday, mayScan, let kept = try keptDay(day, reader: reader) {
                computed = kept
                health = kept.document(final: true, nowMs: 0).json(seq: nil)
            } else {
                var withSleep = try aggregate()
                withSleep.sleep = try running.night(
                    day, settings: settings, reader: reader, nowMs: nowMs, isToday: isToday, keep: keeping)
                health = withSleep.document(final: !isToday, nowMs: isToday ? nowMs : 0).json(seq: nil)
            }
        }

        var location: JSONValue = .null
        if include.contains(.location) {
            if let current, let counted = Self.fixCount(in: current.payload), let first = current.firstFix, let last = current.lastFix {
                location = .object([("fixes", .number(counted)), ("first", .raw(first)), ("last", .raw(last))])
            } else if let current, let counted = Self.fixCount(in: current.payload) {
                // Stored before schema 3 kept the ends: two index seeks, no count.
                let ends = try reader.read { try $0.fixEnds(fromMs: bounds.start, toMs: bounds.end) }
                location = .object([("fixes", .number(counted)), ("first", DayReport.endPoint(ends.first)), ("last", DayReport.endPoint(ends.last))])
            } else {
                let fixes = try fixesOnly()
                location = .object([
                    ("fixes", .number(fixes.fixes)), ("first", DayReport.endPoint(fixes.first)), ("last", DayReport.endPoint(fixes.last)),
                ])
            }
        }

        var points: [TrackPoint]?
        if let track {
            var timeline = HeartRateTimeline()
            if heartRateTimeline {
                try reader.read { reads in
                    try reads.forEachValidHeartRate(fromMs: bounds.start, toMs: bounds.end) { timeline.append(timeMs: $0, bpm: $1) }
                }
            }
            var collected: [TrackPoint] = []
            let add = { (fix: StoredFix) in
                collected.append(TrackPoint(fix: fix, heartRate: timeline.nearest(to: fix.timeMs, withinMs: self.settings.gapLimitMs)))
            }
            switch track {
            case .fiveMinutes: try reader.read { try $0.firstFixPerSlot(fromMs: bounds.start, toMs: bounds.end, slotMs: Self.fiveMinutesMs, add) }
            case .full: try reader.read { try $0.forEachFix(fromMs: bounds.start, toMs: bounds.end, add) }
            }
            points = collected
        }

        var minutes: [(Int64, Double)]?
        if include.contains(.hr) {
            var collected: [(Int64, Double)] = []
            try reader.read { reads in
                try reads.heartRateMeans(fromMs: bounds.start, toMs: bounds.end, bucketMs: 60_000) { collected.append(($0, $1)) }
            }
            minutes = collected
        }
        var timeline: JSONValue?
        if include.contains(.timeline) {
            guard mayScan else { throw ScanNeeded() }
            var built = try DayTimeline.build(day, settings: settings, reader: reader)
            timeline = built.json()
        }
        let workouts = include.contains(.workouts) ? try reader.read { try $0.workouts(fromMs: bounds.start, toMs: bounds.end) } : nil
        return DayReport(
            day: day, zoneName: settings.zoneName, hasData: hasData, health: health, location: location, track: points,
            heartRateMinutes: minutes, timeline: timeline, workouts: workouts)
    }

    /// Brings the days it carries up to date with the rows stored since the last call, between
    /// queries (`RunningDays.follow`). True when there were new rows: call again soon.
    func follow(now: Date, yieldTo queriesWaiting: () -> Bool = { false }) -> Bool {
        do {
            let reader = try openReader()
            return try reader.snapshot {
                try running.follow(
                    settings: settings, reader: reader, today: LocalDay(containing: now, timeZone: settings.timeZone),
                    nowMs: now.unixMs, keep: keeping, yieldTo: queriesWaiting)
            }
        } catch {
            reader = nil
            running.removeAll()
            return false
        }
    }

    /// A past day answered once (the command line) from the night the agent kept for it and the
    /// day's kept folds, else its rows; nil without a kept night.
    private func keptDay(_ day: LocalDay, reader: StoreReader) throws -> DayAggregate? {
        let rows = try DayAndNightRows(day, reader: reader)
        guard let night = try SleepNight.kept(day, settings: settings, reader: reader, fingerprint: rows.night) else { return nil }
        var aggregate = try DayAggregate.kept(day, settings: settings, reader: reader, heartRate: rows.day)
            ?? DayAggregate.build(day, settings: settings, reader: reader)
        aggregate.sleep = night
        return aggregate
    }

    /// The day's 15-minute buckets as CSV rows (`keepalive export --format timeline-csv`).
    func timelineCSV(of day: LocalDay) throws -> String {
        let reader = try openReader()
        return try reader.snapshot {
            var timeline = try DayTimeline.build(day, settings: settings, reader: reader)
            return timeline.csv()
        }
    }

    /// The day's valid heart-rate samples, (time, bpm) in time order.
    func validHeartRates(of day: LocalDay) throws -> [(Int64, Int)] {
        let bounds = day.boundsMs
        var samples: [(Int64, Int)] = []
        try openReader().read { reads in try reads.forEachValidHeartRate(fromMs: bounds.start, toMs: bounds.end) { samples.append(($0, $1)) } }
        return samples
    }

    private func openReader() throws -> StoreReader {
        if let reader { return reader }
        guard FileManager.default.fileExists(atPath: storePath) else {
            throw QueryError(code: .internal, message: "no store at \(storePath) yet")
        }
        let opened = try StoreReader(path: storePath)
        reader = opened
        return opened
    }

    /// Whether a stored aggregate's JSON parts are JSON (SQLite's `json_valid()`); logs the ones
    /// that are not.
    static func intact(_ aggregate: StoredDayAggregate, reader: StoreReader) throws -> Bool {
        let parts = [("payload", aggregate.payload), ("first_fix", aggregate.firstFix), ("last_fix", aggregate.lastFix)]
        let broken = try parts.filter { _, text in
            try text.map { try !reader.isValidJSON($0) } ?? false
        }
        guard broken.isEmpty else {
            damageLog.error("a stored day aggregate is not valid JSON; answering from the day's rows", metadata: [
                "date": "\(aggregate.date)", "columns": "\(broken.map(\.0).joined(separator: ","))",
            ])
            return false
        }
        return true
    }

    private static let damageLog = Logger(label: "keepalive.query")

    /// `location.fixes` of a stored aggregate, read without parsing the whole document.
    static func fixCount(in payload: String) -> Int? { count(after: #""location":{"fixes":"#, in: payload) }

    /// The whole number right after `key` in `payload` (our own canonical JSON), if any.
    private static func count(after key: String, in payload: String) -> Int? {
        let key = Array(key.utf8)
        let bytes = Array(payload.utf8)
        guard bytes.count > key.count else { return nil }
        for start in 0...(bytes.count - key.count) where bytes[start] == key[0] && bytes[start..<(start + key.count)].elementsEqual(key) {
            let digits = bytes[(start + key.count)...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            return Int(String(decoding: digits, as: UTF8.self))
        }
        return nil
    }

    /// Whether a stored aggregate counted any heart-rate sample or fix.
    private static func aggregateHasData(_ payload: String) -> Bool {
        (count(after: #""heart_rate":{"samples":"#, in: payload) ?? 0) > 0 || (fixCount(in: payload) ?? 0) > 0
    }
}
