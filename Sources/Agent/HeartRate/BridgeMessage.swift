import Foundation

/// One heart-rate bridge message (SPEC "Heart rate: the bridge"): a JSON object
/// `{"ts":"<ISO-8601 UTC, ms>","seq":…,"sensor":"<id>","raw":"<hex of 0x2A37>"}`; other fields
/// (`bpm`, `rr`) may be present and are ignored: `raw` is authoritative.
public struct BridgeMessage: Sendable, Equatable {
    public var sensor: String
    /// The bridge's timestamp, when it gave a readable one (sanity is judged at ingest).
    public var timestamp: Date?
    public var seq: Int?
    public var raw: [UInt8]
    public var measurement: HeartRateMeasurement

    /// One line's outcome.
    public typealias Parsed = Result<BridgeMessage, Rejection>

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case tooLong(Int)
        case notJSON
        case missing(String)
        case badField(String)
        case badMeasurement(HeartRateMeasurement.Rejection)

        public var description: String {
            switch self {
            case .tooLong(let bytes): "line of \(bytes) bytes is over the limit"
            case .notJSON: "not a JSON object"
            case .missing(let field): "no \"\(field)\""
            case .badField(let field): "bad \"\(field)\""
            case .badMeasurement(let rejection): "0x2A37: \(rejection)"
            }
        }
    }

    /// Parses one line (NDJSON) or datagram; anything malformed is rejected with the reason.
    public static func parse(_ line: some Collection<UInt8>, maxBytes: Int = 4096) -> Result<BridgeMessage, Rejection> {
        guard line.count <= maxBytes else { return .failure(.tooLong(line.count)) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            return .failure(.notJSON)
        }
        guard let sensorValue = object["sensor"] else { return .failure(.missing("sensor")) }
        guard let sensor = sensorValue as? String, !sensor.isEmpty, sensor.utf8.count <= 64,
            !sensor.contains(where: { "/+#".contains($0) || $0.isNewline })
        else { return .failure(.badField("sensor")) }
        guard let rawValue = object["raw"] else { return .failure(.missing("raw")) }
        guard let hex = rawValue as? String, let raw = Self.bytes(hex: hex) else { return .failure(.badField("raw")) }
        let measurement: HeartRateMeasurement
        switch HeartRateMeasurement.parse(raw) {
        case .success(let value): measurement = value
        case .failure(let rejection): return .failure(.badMeasurement(rejection))
        }
        let timestamp = (object["ts"] as? String).flatMap(Self.date(iso:))
        let seq = (object["seq"] as? NSNumber).flatMap { Int(exactly: $0.doubleValue) }
        return .success(BridgeMessage(sensor: sensor, timestamp: timestamp, seq: seq, raw: raw, measurement: measurement))
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0, digits.count <= 1024 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// RFC 3339 / ISO 8601 with or without fractional seconds, `Z` or an offset. The format style
    /// parses in under a microsecond; a new ISO8601DateFormatter per message cost ~150 µs, which
    /// capped a bridge backlog at a few thousand messages a second.
    private static func date(iso text: String) -> Date? { try? isoStyle.parse(text) }

    private static let isoStyle = Date.ISO8601FormatStyle()
}
