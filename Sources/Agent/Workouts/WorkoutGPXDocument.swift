import Foundation

/// One workout as GPX 1.1: a single `<trk>` with its `<type>`, heart rate and cadence on each
/// point in Garmin's TrackPointExtension v1, the form Strava, Garmin Connect and gpxpy read.
enum WorkoutGPXDocument {
    static func document(_ summary: WorkoutExportSummary, points: [WorkoutTrackPoint], creator: String) -> String {
        let title = "\(WorkoutExportText.sportTitle(summary.sport)) \(WorkoutExportText.time(summary.startMs))"
        // No whitespace before the declaration: some importers refuse the file otherwise.
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="\(WorkoutExportText.escape(creator))" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
            http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www8.garmin.com/xmlschemas/TrackPointExtensionv1.xsd">
            <metadata><name>\(WorkoutExportText.escape(title))</name><time>\(WorkoutExportText.time(summary.startMs))</time></metadata>
            <trk><name>\(WorkoutExportText.escape(title))</name><type>\(WorkoutExportText.escape(activityType(summary.sport)))</type><trkseg>

            """
        text.reserveCapacity(text.utf8.count + points.count * 220)
        // Sorted: a consumer takes the points in file order, and a track that steps back in time
        // makes a negative duration and a wrong length.
        for point in points.sorted(by: { $0.timeMs < $1.timeMs }) {
            text += trackPoint(point, sport: summary.sport)
        }
        return text + "</trkseg></trk>\n</gpx>\n"
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

    /// Empty for a point without a usable position: GPX requires lat and lon on every trkpt.
    private static func trackPoint(_ point: WorkoutTrackPoint, sport: String) -> String {
        guard let position = WorkoutExportText.position(point) else { return "" }
        // wptType's order: ele, time, …, extensions.
        var text = "<trkpt lat=\"\(position.lat)\" lon=\"\(position.lon)\">"
        if let altitude = WorkoutExportText.finite(point.altitudeM) { text += "<ele>\(WorkoutExportText.fixed(altitude, 1))</ele>" }
        text += "<time>\(WorkoutExportText.time(point.timeMs))</time>"
        let heartRate = WorkoutExportText.heartRate(point.heartRate)
        let cadence = WorkoutExportText.footCadence(point.cadence, sport: sport)
        if heartRate != nil || cadence != nil {
            // TrackPointExtension v1's order: atemp, wtemp, depth, hr, cad.
            text += "<extensions><gpxtpx:TrackPointExtension>"
            if let heartRate { text += "<gpxtpx:hr>\(heartRate)</gpxtpx:hr>" }
            if let cadence { text += "<gpxtpx:cad>\(cadence)</gpxtpx:cad>" }
            text += "</gpxtpx:TrackPointExtension></extensions>"
        }
        return text + "</trkpt>\n"
    }
}
