import Foundation

/// One workout as GPX 1.1 (`GPXWriter`): a single `<trk>` with its `<type>`, heart rate and
/// cadence on each point, the form Strava, Garmin Connect and gpxpy read.
enum WorkoutGPXDocument {
    static func document(_ summary: WorkoutExportSummary, points: [WorkoutTrackPoint], creator: String) -> String {
        let title = "\(ExportText.sportTitle(summary.sport)) \(ExportText.time(summary.startMs))"
        // Sorted: a consumer takes the points in file order, and a track that steps back in time
        // makes a negative duration and a wrong length.
        let sorted = points.sorted { $0.timeMs < $1.timeMs }.lazy.map { point in
            GPXWriter.Point(
                timeMs: point.timeMs, lat: point.lat, lon: point.lon, elevationM: point.altitudeM, heartRate: point.heartRate,
                cadence: ExportText.footCadence(point.cadence, sport: summary.sport))
        }
        return GPXWriter.header(creator: creator, name: title, timeMs: summary.startMs)
            + GPXWriter.track(name: title, type: activityType(summary.sport), points: sorted) + GPXWriter.footer
    }

    /// The words Strava and Garmin Connect write in `<type>` and read back as the sport.
    static func activityType(_ sport: String) -> String {
        switch sport {
        case "run": return "running"
        case "walk": return "walking"
        case "cycle": return "cycling"
        default: return sport
        }
    }
}
