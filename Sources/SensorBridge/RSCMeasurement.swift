/// A Running Speed and Cadence Measurement (Bluetooth GATT characteristic 0x2A53, Running Speed
/// and Cadence Service 0x1814), decoded exactly as the specification lays it out, little-endian:
///
/// - flags (uint8): bit 0 instantaneous stride length present, bit 1 total distance present,
///   bit 2 walking (0) or running (1); bits 3–7 reserved for future use;
/// - instantaneous speed: uint16, 1/256 m/s;
/// - instantaneous cadence: uint8, 1/min (steps or strides per minute: devices differ, see
///   `CadenceUnit` and docs/steps.md);
/// - instantaneous stride length: uint16, 1/100 m, present if bit 0;
/// - total distance: uint32, 1/10 m, present if bit 1.
///
/// Reserved flag bits are ignored, as the Bluetooth core specification asks of a receiver for
/// "reserved for future use" fields (and as the 0x2A37 parser does); they are kept in
/// `reservedFlags` so a log can show them. Bytes beyond what the flags announce are rejected:
/// a future field we cannot place is a loud rejection, never a misread value.
public struct RSCMeasurement: Sendable, Equatable {
    /// Instantaneous speed in 1/256 m/s, as sent.
    public var speed256: Int
    /// Instantaneous cadence in 1/min, as sent (steps or strides: see `CadenceUnit`).
    public var cadence: Int
    /// Instantaneous stride length in 1/100 m, when the sensor sends it.
    public var strideLengthCm: Int?
    /// Total distance in 1/10 m since the sensor's own start, when it sends it (wraps at 2^32).
    public var totalDistanceDm: UInt32?
    /// Bit 2: the sensor judges the wearer to be running rather than walking.
    public var isRunning: Bool
    /// Flag bits 3–7 (reserved for future use), ignored.
    public var reservedFlags: UInt8

    public init(
        speed256: Int, cadence: Int, strideLengthCm: Int? = nil, totalDistanceDm: UInt32? = nil,
        isRunning: Bool = false, reservedFlags: UInt8 = 0
    ) {
        self.speed256 = speed256
        self.cadence = cadence
        self.strideLengthCm = strideLengthCm
        self.totalDistanceDm = totalDistanceDm
        self.isRunning = isRunning
        self.reservedFlags = reservedFlags
    }

    public var speedMetresPerSecond: Double { Double(speed256) / 256 }
    public var strideLengthMetres: Double? { strideLengthCm.map { Double($0) / 100 } }
    public var totalDistanceMetres: Double? { totalDistanceDm.map { Double($0) / 10 } }

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case empty
        case truncated(String)
        case inconsistent(String)
        /// Only from `parse(hex:)`: the text is not an even number of hex digits (1–512 bytes).
        case notHex

        public var description: String {
            switch self {
            case .empty: "empty payload"
            case .notHex: "not hex"
            case .truncated(let what): "truncated: \(what)"
            case .inconsistent(let what): "inconsistent: \(what)"
            }
        }
    }

    /// Decodes `bytes`; a payload that is too short, or longer than its flags announce, is
    /// rejected with the reason.
    public static func parse(_ bytes: [UInt8]) -> Result<RSCMeasurement, Rejection> {
        guard let flags = bytes.first else { return .failure(.empty) }
        var reader = LittleEndianReader(bytes: bytes, offset: 1)
        guard let speed = reader.uint16() else { return .failure(.truncated("instantaneous speed")) }
        guard let cadence = reader.uint8() else { return .failure(.truncated("instantaneous cadence")) }
        var stride: Int?
        if flags & 0x01 != 0 {
            guard let value = reader.uint16() else { return .failure(.truncated("instantaneous stride length")) }
            stride = value
        }
        var total: UInt32?
        if flags & 0x02 != 0 {
            guard let value = reader.uint32() else { return .failure(.truncated("total distance")) }
            total = value
        }
        guard reader.remaining == 0 else {
            return .failure(.inconsistent("\(reader.remaining) bytes beyond what the flags announce"))
        }
        return .success(
            RSCMeasurement(
                speed256: speed, cadence: cadence, strideLengthCm: stride, totalDistanceDm: total,
                isRunning: flags & 0x04 != 0, reservedFlags: flags & 0xF8))
    }

    /// Decodes the hex of a bridge message's `raw` (`"char":"2a53"`).
    public static func parse(hex: String) -> Result<RSCMeasurement, Rejection> {
        guard let bytes = HexBytes.decode(hex) else { return .failure(.notHex) }
        return parse(bytes)
    }

    /// The value as a sensor would send it: the flags follow from which fields are present.
    public var bytes: [UInt8] {
        var flags = reservedFlags & 0xF8
        if strideLengthCm != nil { flags |= 0x01 }
        if totalDistanceDm != nil { flags |= 0x02 }
        if isRunning { flags |= 0x04 }
        var out: [UInt8] = [flags, UInt8(truncatingIfNeeded: speed256), UInt8(truncatingIfNeeded: speed256 >> 8),
                            UInt8(truncatingIfNeeded: cadence)]
        if let strideLengthCm {
            out += [UInt8(truncatingIfNeeded: strideLengthCm), UInt8(truncatingIfNeeded: strideLengthCm >> 8)]
        }
        if let totalDistanceDm { out += (0..<4).map { UInt8(truncatingIfNeeded: totalDistanceDm >> (8 * $0)) } }
        return out
    }
}

/// Reads little-endian unsigned fields from a byte array, nil when the bytes run out.
struct LittleEndianReader {
    let bytes: [UInt8]
    var offset: Int

    var remaining: Int { bytes.count - offset }

    mutating func uint8() -> Int? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return Int(bytes[offset])
    }

    mutating func uint16() -> Int? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }

    mutating func uint32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }
}
