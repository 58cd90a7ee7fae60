/// One 30-s epoch's HRV features that depend only on the beats around it (the window from 240 s
/// before its start to 270 s after): what the agent computes once and keeps. The recording-level
/// inputs (start time, age, gender) and pNN50/pNN20, which sleepecg divides by the recording's
/// widest window, are added when a recording is classified (`SleepFeatures(recording:vectors:)`).
public struct EpochFeatureVector: Sendable {
    /// 26 time-domain features (pNN50 and pNN20 NaN: see above) then the 7 frequency-domain ones.
    public static let valueCount = TimeDomainFeatures.names.count + FrequencyDomainFeatures.names.count
    public static let byteCount = valueCount * 8 + 8

    public let values: [Double]
    /// RR intervals in the window: the width of its row in sleepecg's padded array.
    public let windowIntervals: Int
    /// RR intervals within the limits that ended in the epoch (`SleepEpoch.validBeats`).
    public let validBeats: Int

    init(values: [Double], windowIntervals: Int, validBeats: Int) {
        precondition(values.count == Self.valueCount)
        self.values = values
        self.windowIntervals = windowIntervals
        self.validBeats = validBeats
    }

    /// Little-endian: each value's IEEE bits (NaN and infinities kept), then the two counts as UInt32.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.byteCount)
        func put(_ word: UInt64, bytes: Int) {
            for shift in 0..<bytes { out.append(UInt8(truncatingIfNeeded: word >> (8 * UInt64(shift)))) }
        }
        for value in values { put(value.bitPattern, bytes: 8) }
        put(UInt64(UInt32(clamping: windowIntervals)), bytes: 4)
        put(UInt64(UInt32(clamping: validBeats)), bytes: 4)
        return out
    }

    /// Nil for bytes that are not a vector (wrong length).
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        func word(_ offset: Int, _ count: Int) -> UInt64 {
            (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        values = (0..<Self.valueCount).map { Double(bitPattern: word($0 * 8, 8)) }
        windowIntervals = Int(word(Self.valueCount * 8, 4))
        validBeats = Int(word(Self.valueCount * 8 + 4, 4))
    }

    /// Equal bit for bit (NaN equals NaN).
    public func isIdentical(to other: EpochFeatureVector) -> Bool {
        windowIntervals == other.windowIntervals && validBeats == other.validBeats
            && values.map(\.bitPattern) == other.values.map(\.bitPattern)
    }
}
