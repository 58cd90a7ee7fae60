import Foundation

/// A receiver's NMEA 0183 output (RMC, GGA, GSA per fix, with checksums), for gpsfake: a track
/// at a chosen time and place, where the real captures have fixed dates and never move far.
public enum NMEALog {
    public struct Point: Sendable {
        public var time: Date
        public var lat: Double
        public var lon: Double
        public var speedMps: Double
        public var courseDeg: Double
        public var altitudeM: Double
        /// Horizontal dilution of precision (gpsd's eph is 19 m × HDOP without DGPS).
        public var hdop: Double
        /// False for a receiver that reports no speed or course (RMC's fields left empty).
        public var reportsSpeed: Bool

        public init(
            time: Date, lat: Double, lon: Double, speedMps: Double = 0, courseDeg: Double = 0, altitudeM: Double = 40, hdop: Double = 0.9,
            reportsSpeed: Bool = true
        ) {
            self.time = time
            self.lat = lat
            self.lon = lon
            self.speedMps = speedMps
            self.courseDeg = courseDeg
            self.altitudeM = altitudeM
            self.hdop = hdop
            self.reportsSpeed = reportsSpeed
        }
    }

    /// A straight walk due north at `speedMps`, one fix a second from `start`.
    public static func walk(start: Date, seconds: Int, lat: Double = 52.5, lon: Double = 13.4, speedMps: Double = 1.4) -> [Point] {
        (0..<seconds).map { second in
            Point(time: start.addingTimeInterval(Double(second)), lat: lat + Double(second) * speedMps / 111_320, lon: lon,
                  speedMps: speedMps, courseDeg: 0)
        }
    }

    /// A run (or walk) around a circular loop of `radiusM` at `speedMps`, one fix a second from
    /// `start`: its length is exactly `speedMps × seconds` (the arc), which a workout's distance is
    /// checked against. Starts at the loop's southernmost point heading east.
    public static func loop(
        start: Date, seconds: Int, speedMps: Double = 3, radiusM: Double = 150, lat: Double = 52.5, lon: Double = 13.4,
        altitudeM: Double = 40
    ) -> [Point] {
        let metresPerDegreeLat = 111_320.0
        let metresPerDegreeLon = metresPerDegreeLat * cos(lat * .pi / 180)
        return (0..<seconds).map { second in
            let angle = Double(second) * speedMps / radiusM  // radians travelled
            let north = -radiusM * cos(angle)
            let east = radiusM * sin(angle)
            let course = (90 - angle * 180 / .pi).truncatingRemainder(dividingBy: 360)
            return Point(
                time: start.addingTimeInterval(Double(second)), lat: lat + radiusM / metresPerDegreeLat + north / metresPerDegreeLat,
                lon: lon + east / metresPerDegreeLon, speedMps: speedMps, courseDeg: course < 0 ? course + 360 : course, altitudeM: altitudeM)
        }
    }

    /// A receiver standing still, one fix a second from `start`.
    public static func standing(start: Date, seconds: Int, lat: Double = 52.5, lon: Double = 13.4) -> [Point] {
        (0..<seconds).map { Point(time: start.addingTimeInterval(Double($0)), lat: lat, lon: lon) }
    }

    /// The log gpsfake plays: three sentences per fix (a 3D fix with 8 satellites). RMC comes
    /// first, so gpsd knows the date, and with it the time, of every fix it reports.
    public static func text(_ points: [Point]) -> String {
        points.flatMap(sentences).map { $0 + "\r\n" }.joined()
    }

    public static func sentences(_ point: Point) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: point.time)
        let centiseconds = ((parts.nanosecond ?? 0) + 5_000_000) / 10_000_000
        let time = String(format: "%02d%02d%02d.%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0, min(centiseconds, 99))
        let date = String(format: "%02d%02d%02d", parts.day ?? 1, parts.month ?? 1, (parts.year ?? 2000) % 100)
        let (latText, latHemisphere) = degreesMinutes(point.lat, degreeDigits: 2, positive: "N", negative: "S")
        let (lonText, lonHemisphere) = degreesMinutes(point.lon, degreeDigits: 3, positive: "E", negative: "W")
        let knots = point.reportsSpeed ? String(format: "%.2f", point.speedMps / 0.514444) : ""
        let course = point.reportsSpeed ? String(format: "%.1f", point.courseDeg) : ""
        // Two decimals at most, none trailing: "0.9", as before the DOP could be set.
        let hdop = String((point.hdop * 100).rounded() / 100)
        let pdop = String((point.hdop * 200).rounded() / 100)
        return [
            "GPRMC,\(time),A,\(latText),\(latHemisphere),\(lonText),\(lonHemisphere),\(knots),\(course),\(date),,,A",
            "GPGGA,\(time),\(latText),\(latHemisphere),\(lonText),\(lonHemisphere),1,08,\(hdop),\(String(format: "%.1f", point.altitudeM)),M,46.9,M,,",
            "GPGSA,A,3,04,05,09,12,17,20,24,28,,,,,\(pdop),\(hdop),1.5",
        ].map(framed)
    }

    /// `$<body>*<checksum>`: the XOR of the body's bytes, two hex digits.
    public static func framed(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return "$\(body)*\(String(format: "%02X", checksum))"
    }

    private static func degreesMinutes(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> (String, String) {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        let text = String(format: "%0\(degreeDigits)d%07.4f", degrees, minutes)
        return (text, value < 0 ? negative : positive)
    }
}
