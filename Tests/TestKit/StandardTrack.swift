import Foundation

/// Laps of a standard 400 m running track as a receiver reports them, for gpsfake or the
/// summary directly: World Athletics' standard track (Track and Field Facilities Manual 2019:
/// two 84.39 m straights and two bends of 36.50 m inner-kerb radius; lane 1 is measured on a line
/// 0.30 m outside the kerb, radius 36.80 m, which makes the lap 400.00 m; 36.50 m taken as the
/// measurement line's radius would make it 398.1 m).
///
/// The runner starts at the start of the home straight heading east, runs anticlockwise, one fix
/// a second. With `errorM` each position is off by a seeded Gaussian error of that RMS
/// (horizontal: σ = errorM / √2 per axis, independent from fix to fix, the hard case for a
/// smoother: real receivers' errors drift slowly), and the Doppler speed and course by the
/// σ `speedErrorMps` a phone chip reports them with.
public enum StandardTrack {
    public static let straightM = 84.39
    public static let radiusM = 36.80
    public static var lapM: Double { 2 * straightM + 2 * .pi * radiusM }

    /// Metres east and north of the start, and the course (degrees from north), at `s` metres
    /// along the lap.
    public static func position(atM s: Double) -> (east: Double, north: Double, courseDeg: Double) {
        let along = s.truncatingRemainder(dividingBy: lapM)
        let bend = Double.pi * radiusM
        if along < straightM { return (along, 0, 90) }
        if along < straightM + bend {
            let angle = (along - straightM) / radiusM  // radians turned, anticlockwise
            return (straightM + radiusM * sin(angle), radiusM - radiusM * cos(angle), 90 - angle * 180 / .pi)
        }
        if along < 2 * straightM + bend { return (straightM - (along - straightM - bend), 2 * radiusM, 270) }
        let angle = (along - 2 * straightM - bend) / radiusM
        return (-radiusM * sin(angle), radiusM + radiusM * cos(angle), 270 - angle * 180 / .pi)
    }

    public static func laps(
        start: Date, laps: Int, speedMps: Double = 3.5, errorM: Double = 0, speedErrorMps: Double = 0, seed: UInt64 = 1,
        lat: Double = 52.5, lon: Double = 13.4, reportsSpeed: Bool = true
    ) -> [NMEALog.Point] {
        var random = SplitMix(seed: seed)
        func gaussian() -> Double {
            // Box–Muller.
            let u = max(random.nextUnit(), .leastNonzeroMagnitude), v = random.nextUnit()
            return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
        }
        let metresPerDegreeLat = 111_320.0
        let metresPerDegreeLon = metresPerDegreeLat * cos(lat * .pi / 180)
        let seconds = Int((Double(laps) * lapM / speedMps).rounded(.up))
        let sigma = errorM / 2.0.squareRoot()
        return (0...seconds).map { second in
            let s = min(Double(second) * speedMps, Double(laps) * lapM)
            let (east, north, course) = position(atM: s == Double(laps) * lapM ? s - 1e-9 : s)
            let speed = max(0, speedMps + speedErrorMps * gaussian())
            let courseError = speedErrorMps > 0 ? speedErrorMps / speedMps * 180 / .pi * gaussian() : 0
            var heading = (course + courseError).truncatingRemainder(dividingBy: 360)
            if heading < 0 { heading += 360 }
            return NMEALog.Point(
                time: start.addingTimeInterval(Double(second)), lat: lat + (north + sigma * gaussian()) / metresPerDegreeLat,
                lon: lon + (east + sigma * gaussian()) / metresPerDegreeLon, speedMps: speed, courseDeg: heading,
                reportsSpeed: reportsSpeed)
        }
    }
}
