import Foundation

/// A TPV report as libgps decoded it: unvalidated, NaN where gpsd gave nothing.
struct RawFix: Sendable {
    var time: Date?
    var mode: Int
    var lat: Double
    var lon: Double
    var altHAE: Double
    var altMSL: Double
    var speed: Double
    var track: Double
    var climb: Double
    var eph: Double
    var epv: Double
    var satellites: Int?
}

/// A fix that passed validation: a position to store, with the rest null when unknown.
struct ValidFix: Sendable, Equatable {
    var gpsTime: Date?
    var mode: Int
    var lat: Double
    var lon: Double
    var altHAE: Double?
    var altMSL: Double?
    var speed: Double?
    var track: Double?
    var climb: Double?
    var eph: Double?
    var epv: Double?
    var satellites: Int?
}

enum FixValidation {
    /// Why a report is not a usable fix, or nil when it is one.
    static func validate(_ raw: RawFix) -> Result<ValidFix, Rejection> {
        guard raw.mode >= 2 else { return .failure(.noFix) }
        guard raw.lat.isFinite, raw.lon.isFinite else { return .failure(.notFinite) }
        guard (-90...90).contains(raw.lat), (-180...180).contains(raw.lon) else { return .failure(.outOfRange) }
        func plausible(_ value: Double, _ range: ClosedRange<Double>) -> Double? {
            value.isFinite && range.contains(value) ? value : nil
        }
        return .success(
            ValidFix(
                gpsTime: raw.time, mode: min(raw.mode, 3), lat: raw.lat, lon: raw.lon,
                altHAE: raw.mode >= 3 ? plausible(raw.altHAE, -1000...100_000) : nil,
                altMSL: raw.mode >= 3 ? plausible(raw.altMSL, -1000...100_000) : nil,
                speed: plausible(raw.speed, 0...1000), track: plausible(raw.track, 0...360),
                climb: plausible(raw.climb, -1000...1000), eph: plausible(raw.eph, 0...100_000),
                epv: plausible(raw.epv, 0...100_000), satellites: raw.satellites.flatMap { (0...255).contains($0) ? $0 : nil }))
    }

    enum Rejection: String, Error {
        case noFix = "no fix (mode < 2)"
        case notFinite = "position not finite"
        case outOfRange = "position out of range"
    }
}
