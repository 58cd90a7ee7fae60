/// Five heart-rate zones on the heart-rate-reserve (Karvonen) scheme: zone n starts at
/// `resting + f × (max − resting)` for f = 50, 60, 70, 80, 90 %. Time below zone 1 is in no
/// zone, so the zones add up to at most the day's coverage.
struct HeartRateZones: Sendable, Equatable, Codable {
    let maxHR: Int
    let restingHR: Int

    static let reserveFractions: [Double] = [0.5, 0.6, 0.7, 0.8, 0.9]

    var lowerBoundsBpm: [Double] {
        Self.reserveFractions.map { Double(restingHR) + $0 * Double(maxHR - restingHR) }
    }

    /// 0…4, or nil below zone 1.
    func zone(for bpm: Int) -> Int? {
        lowerBoundsBpm.lastIndex { Double(bpm) >= $0 }
    }

    var scheme: JSONValue {
        .object([
            ("kind", "hrr"), ("max_hr", .number(maxHR)), ("resting_hr", .number(restingHR)),
            ("lower_bounds_bpm", .array(lowerBoundsBpm.map { .number($0, digits: 1) })),
        ])
    }
}
