import Foundation

/// GPX 1.1 with heart rate on track points in Garmin's TrackPointExtension v1 (`gpxtpx:hr`), as
/// Garmin, Strava and most track tools read it. One `<trk>` per day.
enum GPXDocument {
    static func header(creator: String, name: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="\(escape(creator))" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
        http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www8.garmin.com/xmlschemas/TrackPointExtensionv1.xsd">
        <metadata><name>\(escape(name))</name></metadata>

        """
    }

    static func track(_ report: DayReport) -> String {
        var text = "<trk><name>\(report.day)</name><trkseg>\n"
        for point in report.track ?? [] {
            let fix = point.fix
            text += "<trkpt lat=\"\(coordinate(fix.lat))\" lon=\"\(coordinate(fix.lon))\">"
            if let altitude = fix.altMSL ?? fix.altHAE { text += "<ele>\(String(format: "%.1f", altitude))</ele>" }
            text += "<time>\(ISO8601.format(Date(unixMs: fix.timeMs)))</time>"
            if let heartRate = point.heartRate {
                text += "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(heartRate)</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>"
            }
            text += "</trkpt>\n"
        }
        return text + "</trkseg></trk>\n"
    }

    static let footer = "</gpx>\n"

    private static func coordinate(_ value: Double) -> String { String(format: "%.7f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
