/// A CSC Measurement (Bluetooth GATT characteristic 0x2A5B, Cycling Speed and Cadence Service
/// 0x1816), decoded as the Bluetooth SIG's characteristic definition lays it out
/// (org.bluetooth.characteristic.csc_measurement, mirrored in github.com/oesmith/gatt-xml),
/// little-endian:
///
/// - flags (uint8): bit 0 wheel revolution data present, bit 1 crank revolution data present;
///   bits 2–7 reserved for future use;
/// - cumulative wheel revolutions: uint32, and last wheel event time: uint16 in 1/1024 s,
///   present if bit 0;
/// - cumulative crank revolutions: uint16, and last crank event time: uint16 in 1/1024 s,
///   present if bit 1.
///
/// The counts and event times are cumulative and wrap (CSCS 1.0: the event time "rolls over
/// every 64 seconds"); turning two successive measurements into revolutions and time is
/// `CSCRevolutions`' job, not this type's.
///
/// Reserved flag bits are ignored and kept, as `RSCMeasurement` does. A value announcing neither
/// wheel nor crank data carries nothing and is rejected, as are bytes beyond what the flags
/// announce: a future field we cannot place is a loud rejection, never a misread value.
public struct CSCMeasurement: ForwardedCharacteristic {
    public static let char = "2a5b"

    /// Cumulative wheel revolutions (wrap at 2^32) and the time of the last one.
    public struct Wheel: Sendable, Equatable {
        public var revolutions: UInt32
        /// 1/1024 s, free-running, wraps at 2^16 (64 s).
        public var eventTime: UInt16

        public init(revolutions: UInt32, eventTime: UInt16) {
            self.revolutions = revolutions
            self.eventTime = eventTime
        }
    }

    /// Cumulative crank revolutions (wrap at 2^16) and the time of the last one.
    public struct Crank: Sendable, Equatable {
        public var revolutions: UInt16
        /// 1/1024 s, free-running, wraps at 2^16 (64 s).
        public var eventTime: UInt16

        public init(revolutions: UInt16, eventTime: UInt16) {
            self.revolutions = revolutions
            self.eventTime = eventTime
        }
    }

    public var wheel: Wheel?
    public var crank: Crank?
    /// Flag bits 2–7 (reserved for future use), ignored.
    public var reservedFlags: UInt8

    public init(wheel: Wheel? = nil, crank: Crank? = nil, reservedFlags: UInt8 = 0) {
        self.wheel = wheel
        self.crank = crank
        self.reservedFlags = reservedFlags
    }

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case empty
        /// Flag bits 0 and 1 both clear: the value says nothing about a wheel or a crank.
        case noData
        case truncated(String)
        case inconsistent(String)
        /// Only from `parse(hex:)`: the text is not an even number of hex digits (1–512 bytes).
        case notHex

        public var description: String {
            switch self {
            case .empty: "empty payload"
            case .noData: "neither wheel nor crank revolution data present"
            case .notHex: "not hex"
            case .truncated(let what): "truncated: \(what)"
            case .inconsistent(let what): "inconsistent: \(what)"
            }
        }
    }

    /// Decodes `bytes`; a payload that is too short, longer than its flags announce, or that
    /// announces no data is rejected with the reason.
    public static func parse(_ bytes: [UInt8]) -> Result<CSCMeasurement, Rejection> {
        guard let flags = bytes.first else { return .failure(.empty) }
        guard flags & 0x03 != 0 else { return .failure(.noData) }
        var reader = LittleEndianReader(bytes: bytes, offset: 1)
        var wheel: Wheel?
        if flags & 0x01 != 0 {
            guard let revolutions = reader.uint32() else { return .failure(.truncated("cumulative wheel revolutions")) }
            guard let time = reader.uint16() else { return .failure(.truncated("last wheel event time")) }
            wheel = Wheel(revolutions: revolutions, eventTime: UInt16(truncatingIfNeeded: time))
        }
        var crank: Crank?
        if flags & 0x02 != 0 {
            guard let revolutions = reader.uint16() else { return .failure(.truncated("cumulative crank revolutions")) }
            guard let time = reader.uint16() else { return .failure(.truncated("last crank event time")) }
            crank = Crank(revolutions: UInt16(truncatingIfNeeded: revolutions), eventTime: UInt16(truncatingIfNeeded: time))
        }
        guard reader.remaining == 0 else {
            return .failure(.inconsistent("\(reader.remaining) bytes beyond what the flags announce"))
        }
        return .success(CSCMeasurement(wheel: wheel, crank: crank, reservedFlags: flags & 0xFC))
    }

    /// Decodes the hex of a bridge message's `raw` (`"char":"2a5b"`).
    public static func parse(hex: String) -> Result<CSCMeasurement, Rejection> {
        guard let bytes = HexBytes.decode(hex) else { return .failure(.notHex) }
        return parse(bytes)
    }

    /// The value as a sensor would send it: the flags follow from which data are present.
    public var bytes: [UInt8] {
        var flags = reservedFlags & 0xFC
        if wheel != nil { flags |= 0x01 }
        if crank != nil { flags |= 0x02 }
        var out: [UInt8] = [flags]
        if let wheel {
            out += (0..<4).map { UInt8(truncatingIfNeeded: wheel.revolutions >> (8 * $0)) }
            out += [UInt8(truncatingIfNeeded: wheel.eventTime), UInt8(truncatingIfNeeded: wheel.eventTime >> 8)]
        }
        if let crank {
            out += [UInt8(truncatingIfNeeded: crank.revolutions), UInt8(truncatingIfNeeded: crank.revolutions >> 8)]
            out += [UInt8(truncatingIfNeeded: crank.eventTime), UInt8(truncatingIfNeeded: crank.eventTime >> 8)]
        }
        return out
    }
}
