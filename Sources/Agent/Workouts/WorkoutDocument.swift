import Foundation
import Store

/// A workout as published (`workout/last`, the query's `workouts`, `keepalive workouts`): the
/// record of docs/contract.md, "Workouts". Stored as the same JSON, without `version` and `seq`
/// (the store keeps the version; a save that changes nothing leaves it).
struct WorkoutDocument: Sendable {
    var id: String
    var sport: String
    var source: WorkoutSource
    var summary: WorkoutSummary
    var timeZone: TimeZone

    /// The id of the workout that starts at `startMs` on `deviceID`: UUIDv5 in the URL namespace
    /// of `keepalive:workout:<device>:<start, Unix ms>`, so anyone can compute it again.
    static func id(deviceID: String, startMs: Int64) -> String {
        UUIDv5.make(name: "keepalive:workout:\(deviceID):\(startMs)")
    }

    /// Everything but `id`, `version` and `seq`, in the contract's order.
    var fields: [(String, JSONValue)] {
        let summary = summary
        let hr: JSONValue =
            if let heartRate = summary.heartRate {
                .object([
                    ("avg", .number(heartRate.average, digits: 1)), ("max", .number(heartRate.maximum)),
                    ("zones_s", .array(heartRate.zonesS.map { .number($0, digits: 0) })),
                ])
            } else {
                .null
            }
        let splits: [JSONValue] = summary.splits.enumerated().map { index, split in
            .object([
                ("km", .number(index + 1)), ("distance_m", .number(split.distanceM, digits: 1)),
                ("elapsed_s", .number(split.elapsedS, digits: 1)),
                ("pace_s_per_km", split.distanceM > 0 ? .number(split.elapsedS / split.distanceM * 1000, digits: 1) : .null),
                ("hr_avg", .number(split.averageHeartRate, digits: 1)),
            ])
        }
        return [
            ("sport", .string(sport)),
            ("start", .string(ISO8601.formatLocal(Self.date(summary.startMs), timeZone: timeZone))),
            ("end", .string(ISO8601.formatLocal(Self.date(summary.endMs), timeZone: timeZone))),
            ("elapsed_s", .number(summary.elapsedS, digits: 1)),
            ("moving_s", .number(summary.movingS, digits: 1)),
            ("distance_m", .number(summary.distanceM, digits: 1)),
            ("distance_source", .string(summary.distanceSource)),
            ("avg_speed_mps", .number(summary.averageSpeedMps, digits: 3)),
            ("max_speed_mps", .number(summary.maxSpeedMps, digits: 3)),
            ("pace_s_per_km", .number(summary.paceSPerKm, digits: 1)),
            ("splits", .array(splits)),
            ("ascent_m", .number(summary.ascentM, digits: 1)),
            ("hr", hr),
            ("trimp", .number(summary.trimp, digits: 1)),
        ] + summary.stepFields + [("source", .string(source.rawValue))]
    }

    /// What the store keeps (compared on the next save: equal means unchanged).
    var storedText: String { JSONValue.object([("id", .string(id))] + fields).text }

    func stored(finished: Bool, nowMs: Int64) -> StoredWorkout {
        StoredWorkout(
            id: id, startMs: summary.startMs, endMs: finished ? summary.endMs : nil, sport: sport, source: source.rawValue, finished: finished,
            distanceM: summary.distanceM, record: storedText, updatedMs: nowMs)
    }

    private static func date(_ ms: Int64) -> Date { Date(unixMs: ms) }
}
