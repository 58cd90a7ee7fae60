import Foundation

/// A per-date request (SPEC "Per-date queries"): a bare date `2026-11-21`, or JSON
/// `{"date":…,"include":[…],"track":"5min|full","format":"json|geojson|gpx","reply_to":…}`.
package struct QueryRequest: Sendable, Equatable {
    package enum Part: String, Sendable, CaseIterable { case health, location, track, hr, timeline, workouts }
    enum TrackDetail: String, Sendable, CaseIterable {
        case fiveMinutes = "5min"
        case full
    }
    package enum Format: String, Sendable, CaseIterable { case json, geojson, gpx }

    package var date: String
    /// Without `include`: the day's health aggregate and location summary, the small answer.
    package var include: Set<Part> = [.health, .location]
    var track: TrackDetail = .fiveMinutes
    package var format: Format = .json
    var replyTo: String?

    static let maximumBytes = 64 * 1024
    static let keys = ["date", "include", "track", "format", "reply_to"]

    /// The request, or the error its reply carries. The date is only checked for its form here;
    /// whether it is a real date and not in the future depends on the time zone and the clock.
    static func parse(_ payload: [UInt8]) -> Result<QueryRequest, QueryError> {
        guard payload.count <= maximumBytes else {
            return .failure(QueryError(code: .tooLarge, message: "request of \(payload.count) bytes; at most \(maximumBytes) are read"))
        }
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let start = payload.firstIndex { !isSpace($0) } ?? payload.endIndex
        let end = (payload.lastIndex { !isSpace($0) }).map { $0 + 1 } ?? start
        guard let trimmed = String(validating: payload[start..<max(start, end)], as: UTF8.self) else {
            return .failure(bad("the request is not UTF-8 text"))
        }
        guard trimmed.hasPrefix("{") || trimmed.hasPrefix("\"") else {
            guard !trimmed.isEmpty else { return .failure(bad("empty request: send a date like 2026-11-21 or a JSON object")) }
            return .success(QueryRequest(date: trimmed))
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(trimmed.utf8), options: [.fragmentsAllowed])
        } catch {
            return .failure(bad("malformed JSON"))
        }
        if let date = parsed as? String { return .success(QueryRequest(date: date)) }
        guard let object = parsed as? [String: Any] else { return .failure(bad("expected a JSON object or a date")) }
        return fromObject(object)
    }

    private static func fromObject(_ object: [String: Any]) -> Result<QueryRequest, QueryError> {
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            return .failure(bad("unknown key \"\(unknown)\" (known: \(keys.joined(separator: ", ")))"))
        }
        guard let date = object["date"] as? String else {
            return .failure(bad(object["date"] == nil ? "\"date\" is missing" : "\"date\" must be a string like \"2026-11-21\""))
        }
        var request = QueryRequest(date: date)
        if let include = object["include"] {
            guard let names = include as? [Any], names.allSatisfy({ $0 is String }) else {
                return .failure(bad("\"include\" must be an array of strings"))
            }
            var parts: Set<Part> = []
            for case let name as String in names {
                guard let part = Part(rawValue: name) else {
                    return .failure(bad("unknown include \"\(name)\" (known: \(Part.allCases.map(\.rawValue).joined(separator: ", ")))"))
                }
                parts.insert(part)
            }
            request.include = parts
        }
        if let track = object["track"] {
            guard let name = track as? String, let detail = TrackDetail(rawValue: name) else {
                return .failure(bad("\"track\" must be \"5min\" or \"full\""))
            }
            request.track = detail
        }
        if let format = object["format"] {
            guard let name = format as? String, let value = Format(rawValue: name) else {
                return .failure(bad("unknown format (known: \(Format.allCases.map(\.rawValue).joined(separator: ", ")))"))
            }
            request.format = value
        }
        if let replyTo = object["reply_to"] {
            guard let topic = replyTo as? String else { return .failure(bad("\"reply_to\" must be a topic string")) }
            request.replyTo = topic
        }
        return .success(request)
    }

    private static func bad(_ message: String) -> QueryError { QueryError(code: .badRequest, message: message) }

    /// The reply_to of a request that may be malformed: errors go there too when it is readable.
    static func replyTo(in payload: [UInt8]) -> String? {
        guard payload.count <= maximumBytes,
            let object = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
        else { return nil }
        return object["reply_to"] as? String
    }
}
