/// A Heart Rate Measurement (Bluetooth GATT characteristic 0x2A37), decoded exactly as the
/// Heart Rate Service specification lays it out, little-endian:
///
/// - flags bit 0: the value is uint16 (else uint8);
/// - bits 1–2: sensor contact: 0 or 1 not supported, 2 supported but not detected, 3 detected;
/// - bit 3: energy expended present (uint16, kJ);
/// - bit 4: RR intervals present (uint16 each, 1/1024 s, as many as remain, oldest first);
/// - bits 5–7: reserved, ignored.
public struct HeartRateMeasurement: Sendable, Equatable {
    public enum Contact: Int, Sendable {
        case unsupported = 0
        case notDetected = 1
        case detected = 2
    }

    public var bpm: Int
    public var contact: Contact
    public var energyKJ: Int?
    /// In 1/1024 s, oldest first.
    public var rrIntervals: [Int]

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case empty
        case truncated(String)
        case inconsistent(String)

        public var description: String {
            switch self {
            case .empty: "empty payload"
            case .truncated(let what): "truncated: \(what)"
            case .inconsistent(let what): "inconsistent: \(what)"
            }
        }
    }

    /// Decodes `bytes`; a payload that is too short or does not add up is rejected with the reason.
    public static func parse(_ bytes: [UInt8]) -> Result<HeartRateMeasurement, Rejection> {
        guard let flags = bytes.first else { return .failure(.empty) }
        var offset = 1
        func uint16(_ what: String) -> Result<Int, Rejection> {
            guard offset + 2 <= bytes.count else { return .failure(.truncated(what)) }
            defer { offset += 2 }
            return .success(Int(bytes[offset]) | Int(bytes[offset + 1]) << 8)
        }

        let bpm: Int
        if flags & 0x01 != 0 {
            switch uint16("16-bit heart rate value") {
            case .success(let value): bpm = value
            case .failure(let rejection): return .failure(rejection)
            }
        } else {
            guard offset < bytes.count else { return .failure(.truncated("8-bit heart rate value")) }
            bpm = Int(bytes[offset])
            offset += 1
        }

        let contact: Contact =
            switch (flags >> 1) & 0x03 {
            case 2: .notDetected
            case 3: .detected
            default: .unsupported
            }

        var energy: Int?
        if flags & 0x08 != 0 {
            switch uint16("energy expended") {
            case .success(let value): energy = value
            case .failure(let rejection): return .failure(rejection)
            }
        }

        var intervals: [Int] = []
        if flags & 0x10 != 0 {
            let remaining = bytes.count - offset
            guard remaining >= 2 else { return .failure(.inconsistent("RR flag set but no RR interval")) }
            guard remaining % 2 == 0 else { return .failure(.truncated("odd byte after the RR intervals")) }
            while offset < bytes.count {
                if case .success(let value) = uint16("RR interval") { intervals.append(value) }
            }
        } else if offset != bytes.count {
            return .failure(.inconsistent("\(bytes.count - offset) bytes beyond what the flags announce"))
        }
        return .success(HeartRateMeasurement(bpm: bpm, contact: contact, energyKJ: energy, rrIntervals: intervals))
    }

    /// The range of plausible human heart rates; outside it a value is kept but flagged.
    public static let plausibleBPM = 25...250

    /// Valid measurements count in aggregates: a real beat rate with the skin in contact.
    /// 0 bpm, contact "not detected", or a rate outside 25–250 are stored but flagged invalid.
    public var isValid: Bool {
        bpm != 0 && contact != .notDetected && Self.plausibleBPM.contains(bpm)
    }
}
