import Foundation
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
        do {
            let today = LocalDay(containing: now, timeZone: settings.timeZone)
            let day = try day(of: request.date, today: today)
            let wantsTrack = request.include.contains(.track) || request.format != .json
            let report = try report(
                day, include: request.include, track: wantsTrack ? request.track : nil, heartRateTimeline: request.format == .gpx,
                now: now, today: today, todayHealth: todayHealth)
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
        } catch {
            reader = nil  // reopened on the next request
            return QueryError(code: .internal, message: "cannot read the store: \(error)").reply
        }
    }

    /// The local day named by `text`: a real date, not after today.
    func day(of text: String, now: Date) throws -> LocalDay {
        try day(of: text, today: LocalDay(containing: now, timeZone: settings.timeZone))
    }

    private func day(of text: String, today: LocalDay) throws -> LocalDay {
        guard let day = LocalDay(text, timeZone: settings.timeZone) else {
            throw QueryError(code: .invalidDate, message: "\"\(text.prefix(40))\" is not a date (YYYY-MM-DD)")
        }
        guard day <= today else {
            throw QueryError(code: .futureDate, message: "\(day) is after today (\(today) in \(settings.zoneName))")
        }
        return day
    }

    func report(
        _ day: LocalDay, include: Set<QueryRequest.Part>, track: QueryRequest.TrackDetail?, heartRateTimeline: Bool, now: Date,
        today: LocalDay? = nil, todayHealth: HealthDocument? = nil
    ) throws -> DayReport {
        let reader = try openReader()
        let bounds = day.boundsMs
        let today = today ?? LocalDay(containing: now, timeZone: settings.timeZone)
        let stored = try reader.dayAggregate(date: day.description)
        var hasData = try reader.hasRawData(fromMs: bounds.start, toMs: bounds.end)
        if !hasData, let stored { hasData = Self.aggregateHasData(stored.payload) }

        var health: JSONValue = .null
        if include.contains(.health) {
            if day == today {
                let document = try todayHealth ?? DayAggregate.build(day, settings: settings, reader: reader)
                    .document(final: false, nowMs: Int64(now.timeIntervalSince1970 * 1000))
                health = document.json(seq: nil)
            } else if let stored, stored.final {
                health = .raw(stored.payload)
            } else {
                health = try DayAggregate.build(day, settings: settings, reader: reader).document(final: true, nowMs: 0).json(seq: nil)
            }
        }

        var location: JSONValue = .null
        if include.contains(.location) {
            // A final aggregate already counted the fixes (and still knows after raw rows are pruned).
            let counted = stored.flatMap { $0.final ? Self.fixCount(in: $0.payload) : nil }
            let span = try reader.fixSpan(fromMs: bounds.start, toMs: bounds.end, count: counted == nil)
            func point(_ fix: StoredFix?) -> JSONValue {
                fix.map { .object([("tst", .int($0.timeMs / 1000)), ("lat", .number($0.lat, digits: 7)), ("lon", .number($0.lon, digits: 7))]) } ?? .null
            }
            location = .object([("fixes", .number(counted ?? span.count)), ("first", point(span.first)), ("last", point(span.last))])
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

    /// `location.fixes` of a stored aggregate, read without parsing the whole document.
    static func fixCount(in payload: String) -> Int? {
        guard let range = payload.range(of: #""location":{"fixes":"#) else { return nil }
        return Int(payload[range.upperBound...].prefix { $0.isNumber })
    }

    private static func aggregateHasData(_ payload: String) -> Bool {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any] else { return false }
        let samples = (object["heart_rate"] as? [String: Any])?["samples"] as? Int ?? 0
        let fixes = (object["location"] as? [String: Any])?["fixes"] as? Int ?? 0
        return samples > 0 || fixes > 0
    }
}
