import Foundation

/// The day's heart-rate figures computed the plain way, straight from bridge messages (their
/// `ts` and the `raw` 0x2A37 bytes decoded here), to check the agent's incremental aggregate
/// against. Deliberately naive: every window is summed again from scratch.
struct HeartRateReference {
    struct Point {
        var t: Double
        var bpm: Int
        var valid: Bool
        var rrMs: [Double]
    }

    var points: [Point]
    let gapLimitS: Double

    init(lines: [String], gapLimitS: Double = 10) throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        points = try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let bytes = Self.bytes(hex: object["raw"] as? String ?? "")
            let flags = bytes[0]
            var index = 1
            let bpm: Int
            if flags & 0x01 != 0 { bpm = Int(bytes[1]) | Int(bytes[2]) << 8; index = 3 } else { bpm = Int(bytes[1]); index = 2 }
            if flags & 0x08 != 0 { index += 2 }
            var rr: [Double] = []
            if flags & 0x10 != 0 {
                while index + 1 < bytes.count {
                    rr.append(Double(Int(bytes[index]) | Int(bytes[index + 1]) << 8) * 1000 / 1024)
                    index += 2
                }
            }
            let contactSupported = flags & 0x04 != 0
            let contact = flags & 0x02 != 0
            let valid = bpm > 0 && (!contactSupported || contact) && (25...250).contains(bpm)
            return Point(t: formatter.date(from: object["ts"] as? String ?? "")!.timeIntervalSince1970, bpm: bpm, valid: valid, rrMs: rr)
        }
        self.gapLimitS = gapLimitS
    }

    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var characters = Array(hex)
        while characters.count >= 2 {
            result.append(UInt8(String(characters[0..<2]), radix: 16) ?? 0)
            characters.removeFirst(2)
        }
        return result
    }

    var valid: [Point] { points.filter(\.valid).sorted { $0.t < $1.t } }

    /// (bpm of the earlier sample, seconds) for every weighted interval.
    private var intervals: [(bpm: Int, seconds: Double)] {
        let valid = self.valid
        return zip(valid, valid.dropFirst()).compactMap { a, b in
            let gap = b.t - a.t
            return gap > 0 && gap <= gapLimitS ? (a.bpm, gap) : nil
        }
    }

    var coverageS: Double { intervals.reduce(0) { $0 + $1.seconds } }
    var average: Double { intervals.reduce(0) { $0 + Double($1.bpm) * $1.seconds } / coverageS }

    func zonesS(maxHR: Int, restingHR: Int) -> [Double] {
        let bounds = [0.5, 0.6, 0.7, 0.8, 0.9].map { Double(restingHR) + $0 * Double(maxHR - restingHR) }
        var zones = [Double](repeating: 0, count: 5)
        for interval in intervals {
            if let zone = bounds.lastIndex(where: { Double(interval.bpm) >= $0 }) { zones[zone] += interval.seconds }
        }
        return zones
    }

    /// Lowest mean over 5-minute windows ending at a valid sample, spanning ≥ 270 s with no dropout.
    var resting: Double? {
        let valid = self.valid
        var lowest: Double?
        for end in valid.indices {
            let members = valid[...end].filter { $0.t >= valid[end].t - 300 }
            guard let first = members.first, valid[end].t - first.t >= 270 else { continue }
            let dropout = zip(members, members.dropFirst()).contains { $1.t - $0.t > gapLimitS }
            guard !dropout else { continue }
            let mean = Double(members.map(\.bpm).reduce(0, +)) / Double(members.count)
            lowest = min(lowest ?? mean, mean)
        }
        return lowest
    }

    /// RMSSD over successive RR intervals, the chain cut by invalid samples, dropouts and
    /// intervals outside 300–2000 ms.
    var rmssd: Double? {
        var previous: Double?
        var lastT: Double?
        var squares: [Double] = []
        for point in points.sorted(by: { $0.t < $1.t }) {
            guard point.valid else { previous = nil; continue }
            if let lastT, point.t - lastT > gapLimitS { previous = nil }
            lastT = point.t
            for rr in point.rrMs {
                guard (300...2000).contains(rr) else { previous = nil; continue }
                if let previous { squares.append((rr - previous) * (rr - previous)) }
                previous = rr
            }
        }
        return squares.isEmpty ? nil : (squares.reduce(0, +) / Double(squares.count)).squareRoot()
    }
}
