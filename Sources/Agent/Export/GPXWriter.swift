import Foundation

/// GPX 1.1 with heart rate and cadence on track points in Garmin's TrackPointExtension v1
/// (`gpxtpx:hr`, `gpxtpx:cad`), as Garmin, Strava, gpxpy and most track tools read it. The one
/// GPX writer: a day's track (a query's reply, `keepalive export`, one `<trk>` per day) and a
/// workout (`keepalive export --workout`, one `<trk>` with its `<type>`) are written by it, in
/// pieces so that an export of many days streams.
enum GPXWriter {
    /// One `<trkpt>`'s values as stored; the writer leaves out what its schema refuses.
    struct Point: Sendable {
        var timeMs: Int64
        var lat: Double
        var lon: Double
        var elevationM: Double?
        var heartRate: Int?
        /// Strides a minute, as gpxtpx:cad carries it (`ExportText.footCadence`).
        var cadence: Int? = nil
    }

    /// The declaration, `<gpx>` and its `<metadata>`. No whitespace before the declaration: some
    /// importers refuse the file otherwise.
    static func header(creator: String, name: String, timeMs: Int64? = nil) -> String {
        let time = timeMs.map { "<time>\(ExportText.time($0))</time>" } ?? ""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="\(ExportText.escape(creator))" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
            http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www8.garmin.com/xmlschemas/TrackPointExtensionv1.xsd">
            <metadata><name>\(ExportText.escape(name))</name>\(time)</metadata>

            """
    }

    /// One `<trk>` of one segment, the points in the order given (the caller's: a consumer takes
    /// them in file order).
    static func track(name: String, type: String? = nil, points: some Sequence<Point>) -> String {
        var text = "<trk><name>\(ExportText.escape(name))</name>"
        if let type { text += "<type>\(ExportText.escape(type))</type>" }
        text += "<trkseg>\n"
        text.reserveCapacity(text.utf8.count + points.underestimatedCount * 220)
        for point in points { text += trackPoint(point) }
        return text + "</trkseg></trk>\n"
    }

    static let footer = "</gpx>\n"

    /// Empty for a point without a usable position: GPX requires lat and lon on every trkpt.
    private static func trackPoint(_ point: Point) -> String {
        guard let position = ExportText.position(lat: point.lat, lon: point.lon) else { return "" }
        // wptType's order: ele, time, …, extensions.
        var text = "<trkpt lat=\"\(position.lat)\" lon=\"\(position.lon)\">"
        if let elevation = ExportText.finite(point.elevationM) { text += "<ele>\(ExportText.fixed(elevation, 1))</ele>" }
        text += "<time>\(ExportText.time(point.timeMs))</time>"
        let heartRate = ExportText.heartRate(point.heartRate)
        if heartRate != nil || point.cadence != nil {
            // TrackPointExtension v1's order: atemp, wtemp, depth, hr, cad.
            text += "<extensions><gpxtpx:TrackPointExtension>"
            if let heartRate { text += "<gpxtpx:hr>\(heartRate)</gpxtpx:hr>" }
            if let cadence = point.cadence { text += "<gpxtpx:cad>\(cadence)</gpxtpx:cad>" }
            text += "</gpxtpx:TrackPointExtension></extensions>"
        }
        return text + "</trkpt>\n"
    }
}
