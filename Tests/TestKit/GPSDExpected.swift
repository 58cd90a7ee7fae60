import Foundation

/// gpsd's own expected output for a capture (`*.log.chk`): its TPV reports.
public enum GPSDExpected {
    public struct TPV: Sendable, Hashable {
        public let timeMs: Int64?
        public let lat: Double
        public let lon: Double
    }

    /// TPV reports with a position, in order.
    public static func positions(chk path: String) throws -> [TPV] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return text.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.contains("\"class\":\"TPV\""),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else { return nil }
            let time = (object["time"] as? String).flatMap { formatter.date(from: $0) }
            return TPV(timeMs: time.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }, lat: lat, lon: lon)
        }
    }
}
