import Foundation

/// One workout's samples for an export: its fixes with the heart rate nearest in time (and cadence where a step sensor gave one).
struct WorkoutTrackPoint: Sendable, Equatable {
    var timeMs: Int64          // Unix ms
    var lat: Double
    var lon: Double
    var altitudeM: Double?     // MSL when known
    var heartRate: Int?        // bpm
    var distanceM: Double?     // cumulative distance from the workout's start (the agent's distance filter)
    var cadence: Int?          // steps per minute (TCX RunCadence is per-foot strides: steps/2)
}

struct WorkoutExportSummary: Sendable, Equatable {
    var id: String             // UUID string
    var sport: String          // "run" | "walk" | "cycle" (others possible)
    var startMs: Int64
    var endMs: Int64
    var movingS: Double
    var distanceM: Double
    var avgHR: Int?
    var maxHR: Int?
    /// Per-km laps: end time (Unix ms) of each completed km; the rest is the last lap.
    var splitEndsMs: [Int64]
}
