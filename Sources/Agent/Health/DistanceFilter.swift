import Store

/// Distance travelled, without the wander of a parked receiver.
///
/// Positions are first smoothed: the mean of the last 5 fixes (restarted after a gap of more
/// than 10 s), which takes most of the fix-to-fix noise out. Distance is then measured between
/// anchor points. A smoothed position becomes the next anchor, and the straight line to it is
/// added, only when both hold:
/// - it is farther from the anchor than the newest fix's own error: `max(10 m, eph)` (gpsd's
///   95 % horizontal error; 20 m when the receiver gives none), and
/// - the receiver is moving, judged by the speed it reports (Doppler, which does not wander
///   with the position): at least 0.5 m/s in every fix of the window, so one spike is not
///   movement. Fixes without a reported speed use the displacement over the time since the
///   anchor instead.
/// A parked receiver's position drifts by metres while its speed stays near zero, so it adds
/// nothing; while moving, anchors follow the track every 10 m or so. Corners shorter than that
/// are cut, so a walk measures a little short rather than jitter making it long.
struct DistanceFilter: Sendable, Codable {
    static let minimumStepM = 10.0
    static let unknownErrorM = 20.0
    static let movingSpeedMps = 0.5
    static let window = 5
    static let windowGapMs: Int64 = 10_000

    private var recent: [StoredFix] = []
    private var anchor: Anchor?
    private(set) var distanceM = 0.0

    mutating func add(_ fix: StoredFix) {
        if let last = recent.last, fix.timeMs - last.timeMs > Self.windowGapMs { recent.removeAll() }
        recent.append(fix)
        if recent.count > Self.window { recent.removeFirst() }
        let lat = recent.map(\.lat).reduce(0, +) / Double(recent.count)
        let lon = recent.map(\.lon).reduce(0, +) / Double(recent.count)
        guard let anchor else {
            self.anchor = Anchor(lat: lat, lon: lon, timeMs: fix.timeMs)
            return
        }
        let step = Geodesy.distanceM(lat1: anchor.lat, lon1: anchor.lon, lat2: lat, lon2: lon)
        guard step > max(Self.minimumStepM, fix.eph ?? Self.unknownErrorM) else { return }
        let speeds = recent.compactMap(\.speed)
        let moving: Bool
        if speeds.count == recent.count {
            moving = speeds.allSatisfy { $0 >= Self.movingSpeedMps }
        } else {
            let elapsedS = Double(fix.timeMs - anchor.timeMs) / 1000
            moving = elapsedS > 0 && step / elapsedS >= Self.movingSpeedMps
        }
        guard moving else { return }
        distanceM += step
        self.anchor = Anchor(lat: lat, lon: lon, timeMs: fix.timeMs)
    }

    /// The last position distance was counted to.
    private struct Anchor: Sendable, Codable {
        var lat: Double
        var lon: Double
        var timeMs: Int64
    }
}
