/// The little-endian packing of an ingest journal slot's body (JournalEntry.swift), which each
/// `SampleKind` uses to write and read its rows.

/// Appends little-endian numbers to a buffer of bounded size; `padded` is nil once it overflowed.
public struct JournalWriter {
    private var buffer: [UInt8] = []
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    public mutating func byte(_ value: UInt8) { buffer.append(value) }

    /// RR intervals are u16 on the wire (0x2A37); a count over 65 535 cannot be encoded and
    /// makes the entry not fit.
    public mutating func uint16(_ value: Int) {
        guard (0...0xFFFF).contains(value) else {
            buffer.append(contentsOf: [UInt8](repeating: 0, count: capacity + 1))
            return
        }
        let clamped = UInt16(value)
        buffer.append(UInt8(clamped & 0xFF))
        buffer.append(UInt8(clamped >> 8))
    }

    public mutating func int64(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    public mutating func double(_ value: Double) { int64(Int64(bitPattern: value.bitPattern)) }

    public mutating func optionalDouble(_ value: Double?) {
        byte(value == nil ? 0 : 1)
        if let value { double(value) }
    }

    public mutating func optionalInt64(_ value: Int64?) {
        byte(value == nil ? 0 : 1)
        if let value { int64(value) }
    }

    /// Bytes longer than a u16 make the entry not fit, as any other overflow.
    public mutating func bytes(_ value: [UInt8]) {
        guard value.count <= 0xFFFF else {
            buffer.append(contentsOf: [UInt8](repeating: 0, count: capacity + 1))
            return
        }
        uint16(value.count)
        buffer.append(contentsOf: value)
    }

    public mutating func string(_ value: String) { bytes(Array(value.utf8)) }

    func padded() -> [UInt8]? {
        guard buffer.count <= capacity else { return nil }
        return buffer + [UInt8](repeating: 0, count: capacity - buffer.count)
    }
}

/// Reads what `JournalWriter` wrote; every read is nil past the end.
public struct JournalReader {
    private let buffer: [UInt8]
    private var offset = 0

    init(_ buffer: [UInt8]) { self.buffer = buffer }

    public mutating func byte() -> UInt8? {
        guard offset < buffer.count else { return nil }
        defer { offset += 1 }
        return buffer[offset]
    }

    public mutating func uint16() -> Int? {
        guard let low = byte(), let high = byte() else { return nil }
        return Int(low) | Int(high) << 8
    }

    public mutating func int64() -> Int64? {
        guard offset + 8 <= buffer.count else { return nil }
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(buffer[offset + index]) }
        offset += 8
        return Int64(bitPattern: value)
    }

    public mutating func double() -> Double? { int64().map { Double(bitPattern: UInt64(bitPattern: $0)) } }

    /// nil past the end; `.some(nil)` for an absent value.
    public mutating func optionalDouble() -> Double?? {
        guard let present = byte() else { return nil }
        guard present != 0 else { return .some(nil) }
        guard let value = double() else { return nil }
        return .some(value)
    }

    public mutating func optionalInt64() -> Int64?? {
        guard let present = byte() else { return nil }
        guard present != 0 else { return .some(nil) }
        guard let value = int64() else { return nil }
        return .some(value)
    }

    public mutating func bytes() -> [UInt8]? {
        guard let count = uint16(), offset + count <= buffer.count else { return nil }
        defer { offset += count }
        return Array(buffer[offset..<(offset + count)])
    }

    public mutating func string() -> String? { bytes().map { String(decoding: $0, as: UTF8.self) } }
}
