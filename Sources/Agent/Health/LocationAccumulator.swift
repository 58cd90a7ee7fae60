import Store

/// The location part of a day's health aggregate, folded one fix at a time in time order.
///
/// - `slots_with_fix`: location slots (`location_interval_s`, aligned to the clock) holding at
///   least one stored fix.
/// - `moving_s`: the time between consecutive fixes (at most 60 s apart) that both report a
///   speed of at least 0.5 m/s.
/// - `max_speed_mps`: the highest speed the receiver reported.
/// - `distance_m`: see `DistanceFilter`.
/// - `bbox`: `[min_lat, min_lon, max_lat, max_lon]` (a day across the antimeridian gets the
///   long way round).
struct LocationAccumulator: Sendable, Codable {
    static let movingGapLimitMs: Int64 = 60_000

    let intervalS: Int64
    private(set) var fixes = 0
    private(set) var slotsWithFix: Set<Int64> = []
    private(set) var movingMs: Int64 = 0
    private(set) var maxSpeed: Double?
    private(set) var bbox: BoundingBox?
    private var filter = DistanceFilter()
    private(set) var first: StoredFix?
    private(set) var last: StoredFix?

    init(intervalS: Int) {
        self.intervalS = Int64(max(intervalS, 1))
    }

    /// False, and nothing changed, for a fix older than one already added.
    mutating func add(_ fix: StoredFix) -> Bool {
        if let last, fix.timeMs < last.timeMs { return false }
        fixes += 1
        slotsWithFix.insert(Self.floorDivide(fix.timeMs, intervalS * 1000))
        // Moving: this fix and the one before both report moving speed (one spike is not).
        if let last, let speed = fix.speed, let previous = last.speed,
            min(speed, previous) >= DistanceFilter.movingSpeedMps
        {
            let gap = fix.timeMs - last.timeMs
            if gap <= Self.movingGapLimitMs { movingMs += gap }
        }
        if let speed = fix.speed { maxSpeed = Swift.max(maxSpeed ?? speed, speed) }
        if let box = bbox {
            bbox = BoundingBox(
                minLat: Swift.min(box.minLat, fix.lat), minLon: Swift.min(box.minLon, fix.lon), maxLat: Swift.max(box.maxLat, fix.lat),
                maxLon: Swift.max(box.maxLon, fix.lon))
        } else {
            bbox = BoundingBox(minLat: fix.lat, minLon: fix.lon, maxLat: fix.lat, maxLon: fix.lon)
        }
        filter.add(fix)
        if first == nil { first = fix }
        last = fix
        return true
    }

    var distanceM: Double { filter.distanceM }

    /// Slots that start in `[fromMs, toMs)`.
    func slots(fromMs: Int64, toMs: Int64) -> Int {
        let step = intervalS * 1000
        return Swift.max(0, Int(Self.ceilDivide(toMs, step) - Self.ceilDivide(fromMs, step)))
    }

    func json(slots: Int) -> JSONValue {
        let none = fixes == 0
        return .object([
            ("fixes", .number(fixes)),
            ("slots", .number(slots)),
            ("slots_with_fix", .number(slotsWithFix.count)),
            ("distance_m", none ? .null : .number(distanceM, digits: 1)),
            ("moving_s", none ? .null : .int((movingMs + 500) / 1000)),
            ("max_speed_mps", .number(maxSpeed, digits: 2)),
            ("bbox", bbox.map { .array([.number($0.minLat, digits: 7), .number($0.minLon, digits: 7), .number($0.maxLat, digits: 7), .number($0.maxLon, digits: 7)]) } ?? .null),
        ])
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    static func ceilDivide(_ a: Int64, _ b: Int64) -> Int64 { -floorDivide(-a, b) }

    /// `[min_lat, min_lon, max_lat, max_lon]` of the fixes.
    struct BoundingBox: Sendable, Codable {
        var minLat: Double
        var minLon: Double
        var maxLat: Double
        var maxLon: Double
    }
}
