import Foundation

/// What the GPX and TCX writers share (a day's track and a workout alike): the checks that keep a
/// stored value from making a document its schema refuses, and the text forms both use.
enum ExportText {
    /// `2026-11-21T08:00:00Z`, or `…:00.250Z` when the sample has milliseconds: a fraction of
    /// `.000` on every point of a 1 Hz track is noise some viewers show.
    static func time(_ ms: Int64) -> String {
        let text = ISO8601.format(Date(unixMs: ms))
        return ms % 1000 == 0 ? text.replacingOccurrences(of: ".000Z", with: "Z") : text
    }

    /// Text for an element or attribute: escaped, and without the control characters XML 1.0 has
    /// no way to carry at all (a creator string from a config file could hold one).
    static func escape(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where isXMLCharacter(scalar) { kept.append(scalar) }
        return String(kept).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: return true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    /// Fixed notation: `xsd:decimal` (GPX's lat, lon, ele) takes no exponent, which `description`
    /// would give a value like 1e-05.
    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

    /// A position both schemas take (TCX and GPX both exclude longitude 180); nil for a fix that
    /// must not be written (NaN from a broken reading).
    static func position(lat: Double, lon: Double) -> (lat: String, lon: String)? {
        guard lat.isFinite, lon.isFinite, (-90...90).contains(lat), lon >= -180, lon < 180 else { return nil }
        return (fixed(lat, 7), fixed(lon, 7))
    }

    static func finite(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return value
    }

    /// A heart rate both schemas take (an unsigned byte, at least 1); a strap's 0 means no contact.
    static func heartRate(_ value: Int?) -> Int? {
        guard let value, (1...255).contains(value) else { return nil }
        return value
    }

    /// Cadence as Garmin's files carry it for feet: strides a minute (steps / 2), as TCX's
    /// RunCadence and gpxtpx:cad on a run. None for a ride: a step sensor's count is not the
    /// crank's, and a cycling consumer would show it as one.
    static func footCadence(_ stepsPerMinute: Int?, sport: String) -> Int? {
        guard sport != "cycle", let stepsPerMinute, stepsPerMinute > 0 else { return nil }
        let strides = stepsPerMinute / 2
        return (1...254).contains(strides) ? strides : nil
    }

    /// `Run`, `Walk`, `Ride`, else the stored word capitalised.
    static func sportTitle(_ sport: String) -> String {
        switch sport {
        case "run": return "Run"
        case "walk": return "Walk"
        case "cycle": return "Ride"
        default: return sport.prefix(1).uppercased() + sport.dropFirst()
        }
    }
}
