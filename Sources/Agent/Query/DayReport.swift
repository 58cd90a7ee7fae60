import Foundation
import Store

/// What the store knows about one local day, gathered for a reply or an export.
struct DayReport: Sendable {
    var day: LocalDay
    var zoneName: String
    var hasData: Bool
    /// The health aggregate (stored JSON spliced in, or computed).
    var health: JSONValue
    var location: JSONValue
    var track: [TrackPoint]?
    /// Mean bpm per minute: (minute start, Unix ms; mean).
    var heartRateMinutes: [(Int64, Double)]?
    /// The 15-minute buckets, when asked for (`"include": ["timeline"]`).
    var timeline: JSONValue?
    /// The finished workouts that started this day, when asked for (`"include": ["workouts"]`).
    var workouts: [StoredWorkout]?

    /// A day's first or last fix in `location`: `{"tst","lat","lon"}`, or null without fixes.
    /// Also stored with a finished day's aggregate, so both paths must write the same text.
    static func endPoint(_ fix: StoredFix?) -> JSONValue {
        fix.map { .object([("tst", .int($0.timeMs / 1000)), ("lat", .number($0.lat, digits: 7)), ("lon", .number($0.lon, digits: 7))]) } ?? .null
    }
}

/// A stored fix with the heart rate measured nearest to it (within the dropout limit).
struct TrackPoint: Sendable {
    var fix: StoredFix
    var heartRate: Int?

    /// `{"tst","lat","lon","alt","vel","acc"}`, integers where OwnTracks has them; unknowns left out.
    var json: JSONValue {
        func integer(_ value: Double?) -> JSONValue { value.map { .int(Int64($0.rounded())) } ?? .null }
        let members: [(String, JSONValue)] = [
            ("tst", .int(fix.timeMs / 1000)), ("lat", .number(fix.lat, digits: 7)), ("lon", .number(fix.lon, digits: 7)),
            ("alt", integer(fix.altMSL ?? fix.altHAE)), ("vel", integer(fix.speed.map { $0 * 3.6 })), ("acc", integer(fix.eph)),
        ]
        return .object(members.filter { $0.1 != .null })
    }
}
