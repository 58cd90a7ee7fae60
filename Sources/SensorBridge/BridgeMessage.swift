import Foundation

/// One bridge message (docs/contract.md "Heart rate: the bridge", docs/steps.md): a JSON object
/// `{"ts":"<ISO-8601 UTC, ms>","seq":…,"sensor":"<id>","char":…,"raw":"<hex>"}`. `char` says
/// what it carries: absent or `"2a37"` a Heart Rate Measurement, `"2a53"` an RSC Measurement,
/// `"pmd_acc"` a batch of accelerometer samples (`rate_hz`, `samples`), and any characteristic a
/// sample kind declares (`ForwardedCharacteristic`) its value. `raw` is authoritative; `bpm`,
/// `rr`, `cadence`… are ignored.
public struct BridgeMessage: Sendable, Equatable {
    public var sensor: String
    /// The bridge's timestamp, when it gave a readable one (sanity is judged at ingest). For
    /// an accelerometer batch, the first sample's time.
    public var timestamp: Date?
    public var seq: Int?
    /// The characteristic's value as received (empty for an accelerometer batch).
    public var raw: [UInt8]
    public var reading: Reading

    public enum Reading: Sendable, Equatable {
        case heartRate(HeartRateMeasurement)
        case runningSpeedCadence(RSCMeasurement)
        case acceleration(AccelerationBatch)
        /// A characteristic that a sample kind declares it stores, decoded by its own type.
        case forwarded(any ForwardedCharacteristic)

        public static func == (lhs: Reading, rhs: Reading) -> Bool {
            switch (lhs, rhs) {
            case (.heartRate(let left), .heartRate(let right)): left == right
            case (.runningSpeedCadence(let left), .runningSpeedCadence(let right)): left == right
            case (.acceleration(let left), .acceleration(let right)): left == right
            case (.forwarded(let left), .forwarded(let right)): left.isEqual(to: right)
            default: false
            }
        }
    }

    public var heartRate: HeartRateMeasurement? {
        if case .heartRate(let measurement) = reading { measurement } else { nil }
    }

    /// One line's outcome.
    public typealias Parsed = Result<BridgeMessage, Rejection>

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case tooLong(Int)
        case notJSON
        case missing(String)
        case badField(String)
        case badMeasurement(HeartRateMeasurement.Rejection)
        case badRSC(RSCMeasurement.Rejection)
        case badAcceleration(AccelerationBatch.Rejection)
        /// A forwarded characteristic's value its decoder refused: its label ("0x2A5B") and why.
        case badValue(String, String)
        /// A `char` nothing reads, and the ones that are read.
        case unknownCharacteristic(String, known: [String])

        public var description: String {
            switch self {
            case .tooLong(let bytes): "line of \(bytes) bytes is over the limit"
            case .notJSON: "not a JSON object"
            case .missing(let field): "no \"\(field)\""
            case .badField(let field): "bad \"\(field)\""
            case .badMeasurement(let rejection): "0x2A37: \(rejection)"
            case .badRSC(let rejection): "0x2A53: \(rejection)"
            case .badAcceleration(let rejection): "pmd_acc: \(rejection)"
            case .badValue(let label, let reason): "\(label): \(reason)"
            case .unknownCharacteristic(let char, let known):
                "unknown \"char\" \"\(char.prefix(16))\" (\(known.dropLast().joined(separator: ", ")) or \(known.last ?? ""))"
            }
        }
    }

    /// Parses one line (NDJSON) or datagram; anything malformed is rejected with the reason.
    /// `forwarded`: the further characteristics the agent's sample kinds store.
    public static func parse(
        _ line: some Collection<UInt8>, maxBytes: Int = 4096, forwarded: [any ForwardedCharacteristic.Type] = []
    ) -> Result<BridgeMessage, Rejection> {
        guard line.count <= maxBytes else { return .failure(.tooLong(line.count)) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            return .failure(.notJSON)
        }
        guard let sensorValue = object["sensor"] else { return .failure(.missing("sensor")) }
        guard let sensor = sensorValue as? String, !sensor.isEmpty, sensor.utf8.count <= 64,
            !sensor.contains(where: { "/+#".contains($0) || $0.isNewline })
        else { return .failure(.badField("sensor")) }
        let char: String
        switch object["char"] {
        case nil: char = "2a37"
        case let text as String: char = text.lowercased()
        default: return .failure(.badField("char"))
        }
        let raw: [UInt8]
        let reading: Reading
        if char == "pmd_acc" {
            raw = []
            switch AccelerationBatch.parse(object) {
            case .success(let batch): reading = .acceleration(batch)
            case .failure(let rejection): return .failure(.badAcceleration(rejection))
            }
        } else {
            guard let decode = Self.decoder(of: char, forwarded: forwarded) else {
                return .failure(.unknownCharacteristic(char, known: ["2a37", "2a53"] + forwarded.map { $0.char } + ["pmd_acc"]))
            }
            guard let rawValue = object["raw"] else { return .failure(.missing("raw")) }
            guard let hex = rawValue as? String, let bytes = HexBytes.decode(hex) else { return .failure(.badField("raw")) }
            raw = bytes
            switch decode(bytes) {
            case .success(let value): reading = value
            case .failure(let rejection): return .failure(rejection)
            }
        }
        let timestamp = (object["ts"] as? String).flatMap(Self.date(iso:))
        let seq = (object["seq"] as? NSNumber).flatMap { Int(exactly: $0.doubleValue) }
        return .success(BridgeMessage(sensor: sensor, timestamp: timestamp, seq: seq, raw: raw, reading: reading))
    }

    /// How the value (`raw`) of `char` is read: heart rate and RSC here, any other by the
    /// characteristic a kind declares; nil when nothing reads it.
    private static func decoder(
        of char: String, forwarded: [any ForwardedCharacteristic.Type]
    ) -> (([UInt8]) -> Result<Reading, Rejection>)? {
        switch char {
        case "2a37": { HeartRateMeasurement.parse($0).map(Reading.heartRate).mapError(Rejection.badMeasurement) }
        case "2a53": { RSCMeasurement.parse($0).map(Reading.runningSpeedCadence).mapError(Rejection.badRSC) }
        default: forwarded.first { $0.char == char }.map { characteristic in { characteristic.reading($0) } }
        }
    }

    /// RFC 3339 / ISO 8601 with or without fractional seconds, `Z` or an offset. The format style
    /// parses in under a microsecond; a new ISO8601DateFormatter per message cost ~150 µs, which
    /// capped a bridge backlog at a few thousand messages a second.
    private static func date(iso text: String) -> Date? { try? isoStyle.parse(text) }

    private static let isoStyle = Date.ISO8601FormatStyle()
}
