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

    static let fiveMinutesMs: Int64 = 300_000

    init(storePath: String, settings: AggregateSettings, maxReplyBytes: Int, deviceID: String) {
        self.storePath = storePath
        self.settings = settings
        self.maxReplyBytes = maxReplyBytes
        creator = "keepalive \(KeepAliveVersion.string) (\(deviceID))"
    }

    /// The one reply to `request`. `todayHealth` is the running aggregate the agent holds.
    func answer(_ request: QueryRequest, now: Date, todayHealth: HealthDocument? = nil) -> QueryReply {
        // With scanning allowed there is always a reply.
        answer(request, now: now, todayHealth: todayHealth, mayScan: true) ?? QueryError(code: .internal, message: "no reply").reply
    }

    /// The reply to `request` if it takes only indexed lookups (a finished day's stored
    /// aggregate, which keeps its first and last fix), nil if it needs a scan of the day's rows:
    /// a track, heart-rate minutes, counting the fixes of a day without a final aggregate, or
    /// rebuilding one.
    func quickAnswer(_ request: QueryRequest, now: Date, todayHealth: HealthDocument?) -> QueryReply? {
        guard request.format == .json, !request.include.contains(.track), !request.include.contains(.hr) else { return nil }
        return answer(request, now: now, todayHealth: todayHealth, mayScan: false)
    }

    /// Thrown where answering would scan a day's rows and that was not allowed.
    private struct ScanNeeded: Error {}

    private func answer(_ request: QueryRequest, now: Date, todayHealth: HealthDocument?, mayScan: Bool) -> QueryReply? {
        do {
            let day = try day(of: request.date, now: now)
            let wantsTrack = request.include.contains(.track) || request.format != .json
            let report = try report(
                day, include: request.include, track: wantsTrack ? request.track : nil, heartRateTimeline: request.format == .gpx,
                now: now, todayHealth: todayHealth, mayScan: mayScan)
            let reply: QueryReply
            switch request.format {
            case .json:
                reply = QueryReply(body: ReplyDocument.json(report, include: request.include).bytes, contentType: QueryReply.json, status: 200)
            case .geojson:
                reply = QueryReply(body: GeoJSONDocument.collection([report]).bytes, contentType: QueryReply.geoJSON, status: 200)
            case .gpx:
                var document = GPXDocument.header(creator: creator, name: "\(day)")
                document += GPXDocument.track(report)
                document += GPXDocument.footer
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
            return QueryError(code: .internal, message: "cannot read the store: \(error)").reply
        }
    }

    /// The local day named by `text`: a real date, not after today.
    func day(of text: String, now: Date) throws -> LocalDay {
        guard let day = LocalDay(text, timeZone: settings.timeZone) else {
            throw QueryError(code: .invalidDate, message: "\"\(text.prefix(40))\" is not a date (YYYY-MM-DD)")
        }
        guard day.boundsMs.start <= Self.ms(now) else {
            let today = LocalDay(containing: now, timeZone: settings.timeZone)
            throw QueryError(code: .futureDate, message: "\(day) is after today (\(today) in \(settings.zoneName))")
        }
        return day
    }

    private static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    func report(
        _ day: LocalDay, include: Set<QueryRequest.Part>, track: QueryRequest.TrackDetail?, heartRateTimeline: Bool, now: Date,
        todayHealth: HealthDocument? = nil, mayScan: Bool = true
    ) throws -> DayReport {
        let reader = try openReader()
        return try reader.snapshot {
            try report(
                day, include: include, track: track, heartRateTimeline: heartRateTimeline, now: now,
                todayHealth: todayHealth, mayScan: mayScan, reader: reader)
        }
    }

    private func report(
        _ day: LocalDay, include: Set<QueryRequest.Part>, track: QueryRequest.TrackDetail?, heartRateTimeline: Bool, now: Date,
        todayHealth: HealthDocument?, mayScan: Bool, reader: StoreReader
    ) throws -> DayReport {
        func rebuild() throws -> DayAggregate {
            guard mayScan else { throw ScanNeeded() }
            return try DayAggregate.build(day, settings: settings, reader: reader)
        }
        let bounds = day.boundsMs
        let nowMs = Self.ms(now)
        let isToday = bounds.start <= nowMs && nowMs < bounds.end
        // A stored aggregate whose JSON rotted on the card is not spliced into a reply: the day is
        // recomputed from its rows instead, as if nothing were stored.
        let stored = try reader.dayAggregate(date: day.description).flatMap { Self.intact($0) ? $0 : nil }
        // A stored aggregate with samples or fixes settles it without looking at the raw rows.
        let hasData = try stored.map { Self.aggregateHasData($0.payload) } == true
            || reader.hasRawData(fromMs: bounds.start, toMs: bounds.end)

        var health: JSONValue = .null
        if include.contains(.health) {
            if isToday {
                let document = try todayHealth ?? rebuild().document(final: false, nowMs: nowMs)
                health = document.json(seq: nil)
            } else if let stored, stored.final {
                health = .raw(stored.payload)
            } else {
                health = try rebuild().document(final: true, nowMs: 0).json(seq: nil)
            }
        }

        var location: JSONValue = .null
        if include.contains(.location) {
            // A final aggregate already counted the fixes (and still knows after raw rows are pruned).
            let counted = stored.flatMap { $0.final ? Self.fixCount(in: $0.payload) : nil }
            if let counted, let first = stored?.firstFix, let last = stored?.lastFix {
                location = .object([("fixes", .number(counted)), ("first", .raw(first)), ("last", .raw(last))])
            } else {
                if counted == nil, !mayScan { throw ScanNeeded() }  // counting walks the day's index
                let span = try reader.fixSpan(fromMs: bounds.start, toMs: bounds.end, count: counted == nil)
                location = .object([
                    ("fixes", .number(counted ?? span.count)), ("first", DayReport.endPoint(span.first)), ("last", DayReport.endPoint(span.last)),
                ])
            }
        }

        var points: [TrackPoint]?
        if let track {
            var timeline = HeartRateTimeline()
            if heartRateTimeline {
                try reader.forEachValidHeartRate(fromMs: bounds.start, toMs: bounds.end) { timeline.append(timeMs: $0, bpm: $1) }
            }
            var collected: [TrackPoint] = []
            let add = { (fix: StoredFix) in
                collected.append(TrackPoint(fix: fix, heartRate: timeline.nearest(to: fix.timeMs, withinMs: self.settings.gapLimitMs)))
            }
            switch track {
            case .fiveMinutes: try reader.firstFixPerSlot(fromMs: bounds.start, toMs: bounds.end, slotMs: Self.fiveMinutesMs, add)
            case .full: try reader.forEachFix(fromMs: bounds.start, toMs: bounds.end, add)
            }
            points = collected
        }

        var minutes: [(Int64, Double)]?
        if include.contains(.hr) {
            var collected: [(Int64, Double)] = []
            try reader.heartRateMeans(fromMs: bounds.start, toMs: bounds.end, bucketMs: 60_000) { collected.append(($0, $1)) }
            minutes = collected
        }
        return DayReport(
            day: day, zoneName: settings.zoneName, hasData: hasData, health: health, location: location, track: points,
            heartRateMinutes: minutes)
    }

    /// The day's valid heart-rate samples, (time, bpm) in time order.
    func validHeartRates(of day: LocalDay) throws -> [(Int64, Int)] {
        let bounds = day.boundsMs
        var samples: [(Int64, Int)] = []
        try openReader().forEachValidHeartRate(fromMs: bounds.start, toMs: bounds.end) { samples.append(($0, $1)) }
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

    /// Whether a stored aggregate's JSON parts are JSON; logs the ones that are not.
    static func intact(_ aggregate: StoredDayAggregate) -> Bool {
        let parts = [("payload", aggregate.payload), ("first_fix", aggregate.firstFix), ("last_fix", aggregate.lastFix)]
        let broken = parts.filter { _, text in
            text.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed)) == nil } ?? false
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
