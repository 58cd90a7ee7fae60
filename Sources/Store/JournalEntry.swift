/// One commit window's rows as the body of one fixed-size slot of the ingest journal
/// (JournalFile.swift): the fixes, heart-rate notifications and step records of the window,
/// packed little-endian. Schema-7 files kept the same bodies, 464 bytes, in a table; `decode`
/// reads both (the zero padding is not read).
///
/// Layout: seq (i64; 0 = empty), fix count, heart-rate count, step count (u16 each), then the
/// rows. Optional numbers are preceded by a presence byte; strings and byte strings by a u16
/// length. Bit 15 of the fix count (a slot holds far fewer rows) marks the layout of schema 13,
/// where each notification and step record ends with its optional `origin`: slots an earlier
/// build wrote, without the bit, are still read. A window that does not fit (a 10 Hz strap, a backlog) is written to the tables
/// directly: `encode` answers nil.
struct JournalEntry: Equatable {
    var seq: Int64
    var fixes: [StoredFix] = []
    var heartRates: [StoredHeartRate] = []
    var steps: [StoredStepRecord] = []

    /// Bytes of a slot's body: a 4 KiB slot less its check.
    static let bodySize = JournalFile.bodySize

    var isEmpty: Bool { fixes.isEmpty && heartRates.isEmpty && steps.isEmpty }

    /// Bit 15 of the fix count: the rows carry their origins (schema 13's layout).
    static let withOrigins = 0x8000

    /// The slot body, zero-padded to `bodySize`; nil when the rows do not fit.
    func encode() -> [UInt8]? {
        var out = JournalWriter(capacity: Self.bodySize)
        out.int64(seq)
        guard fixes.count <= 0xFFFF, heartRates.count <= 0xFFFF, steps.count <= 0xFFFF else { return nil }
        guard fixes.count < Self.withOrigins else { return nil }
        out.uint16(fixes.count | Self.withOrigins)
        out.uint16(heartRates.count)
        out.uint16(steps.count)
        for fix in fixes {
            out.int64(fix.timeMs)
            out.int64(fix.receivedMs)
            out.double(fix.lat)
            out.double(fix.lon)
            for value in [fix.altHAE, fix.altMSL, fix.speed, fix.track, fix.climb, fix.eph, fix.epv] { out.optionalDouble(value) }
            out.int64(Int64(fix.mode))
            out.optionalInt64(fix.satellites.map(Int64.init))
            out.bytes(Array(fix.timeSource.utf8))
        }
        for sample in heartRates {
            out.bytes(Array(sample.sensor.utf8))
            out.int64(sample.timeMs)
            out.int64(sample.receivedMs)
            out.int64(Int64(sample.bpm))
            out.int64(Int64(sample.contact))
            out.optionalInt64(sample.energyKJ.map(Int64.init))
            out.byte(sample.valid ? 1 : 0)
            out.bytes(sample.raw)
            out.uint16(sample.rrIntervals.count)
            for rr in sample.rrIntervals { out.uint16(rr) }
            out.optionalInt64(sample.origin)
        }
        for record in steps {
            out.bytes(Array(record.sensor.utf8))
            out.bytes(Array(record.kind.rawValue.utf8))
            out.int64(record.timeMs)
            out.int64(record.receivedMs)
            out.bytes(record.raw)
            out.optionalInt64(record.endMs)
            out.optionalInt64(record.coveredMs)
            out.optionalInt64(record.steps.map(Int64.init))
            out.optionalInt64(record.origin)
        }
        return out.padded()
    }

    /// The rows of a slot body; nil for bytes this code did not write.
    static func decode(_ body: [UInt8]) -> JournalEntry? {
        var input = JournalReader(body)
        guard let seq = input.int64(), let countAndFormat = input.uint16(), let heartRateCount = input.uint16(),
            let stepCount = input.uint16()
        else { return nil }
        let hasOrigins = countAndFormat & withOrigins != 0
        let fixCount = countAndFormat & ~withOrigins
        var entry = JournalEntry(seq: seq)
        for _ in 0..<fixCount {
            guard let timeMs = input.int64(), let receivedMs = input.int64(), let lat = input.double(), let lon = input.double()
            else { return nil }
            var optionals: [Double?] = []
            for _ in 0..<7 {
                guard let value = input.optionalDouble() else { return nil }
                optionals.append(value)
            }
            guard let mode = input.int64(), let satellites = input.optionalInt64(), let source = input.string() else { return nil }
            entry.fixes.append(StoredFix(
                timeMs: timeMs, receivedMs: receivedMs, lat: lat, lon: lon, altHAE: optionals[0], altMSL: optionals[1],
                speed: optionals[2], track: optionals[3], climb: optionals[4], eph: optionals[5], epv: optionals[6],
                mode: Int(mode), satellites: satellites.map { Int($0) }, timeSource: source))
        }
        for _ in 0..<heartRateCount {
            guard let sensor = input.string(), let timeMs = input.int64(), let receivedMs = input.int64(), let bpm = input.int64(),
                let contact = input.int64(), let energy = input.optionalInt64(), let valid = input.byte(), let raw = input.bytes(),
                let rrCount = input.uint16()
            else { return nil }
            var intervals: [Int] = []
            for _ in 0..<rrCount {
                guard let rr = input.uint16() else { return nil }
                intervals.append(rr)
            }
            var origin: Int64?
            if hasOrigins {
                guard let value = input.optionalInt64() else { return nil }
                origin = value
            }
            entry.heartRates.append(StoredHeartRate(
                sensor: sensor, timeMs: timeMs, receivedMs: receivedMs, bpm: Int(bpm), contact: Int(contact),
                energyKJ: energy.map { Int($0) }, valid: valid != 0, raw: raw, rrIntervals: intervals, origin: origin))
        }
        for _ in 0..<stepCount {
            guard let sensor = input.string(), let kindName = input.string(), let kind = StoredStepRecord.Kind(rawValue: kindName),
                let timeMs = input.int64(), let receivedMs = input.int64(), let raw = input.bytes(), let endMs = input.optionalInt64(),
                let coveredMs = input.optionalInt64(), let steps = input.optionalInt64()
            else { return nil }
            var record = StoredStepRecord(sensor: sensor, timeMs: timeMs, receivedMs: receivedMs, rsc: raw)
            record.kind = kind
            record.endMs = endMs
            record.coveredMs = coveredMs
            record.steps = steps.map { Int($0) }
            if hasOrigins {
                guard let origin = input.optionalInt64() else { return nil }
                record.origin = origin
            }
            entry.steps.append(record)
        }
        return entry
    }
}

/// Appends little-endian numbers to a buffer of bounded size; `padded` is nil once it overflowed.
private struct JournalWriter {
    private var buffer: [UInt8] = []
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    mutating func byte(_ value: UInt8) { buffer.append(value) }

    /// RR intervals are u16 on the wire (0x2A37); a count over 65 535 cannot be encoded and
    /// makes the entry not fit.
    mutating func uint16(_ value: Int) {
        guard (0...0xFFFF).contains(value) else {
            buffer.append(contentsOf: [UInt8](repeating: 0, count: capacity + 1))
            return
        }
        let clamped = UInt16(value)
        buffer.append(UInt8(clamped & 0xFF))
        buffer.append(UInt8(clamped >> 8))
    }

    mutating func int64(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    mutating func double(_ value: Double) { int64(Int64(bitPattern: value.bitPattern)) }

    mutating func optionalDouble(_ value: Double?) {
        byte(value == nil ? 0 : 1)
        if let value { double(value) }
    }

    mutating func optionalInt64(_ value: Int64?) {
        byte(value == nil ? 0 : 1)
        if let value { int64(value) }
    }

    /// Bytes longer than a u16 make the entry not fit, as any other overflow.
    mutating func bytes(_ value: [UInt8]) {
        guard value.count <= 0xFFFF else {
            buffer.append(contentsOf: [UInt8](repeating: 0, count: capacity + 1))
            return
        }
        uint16(value.count)
        buffer.append(contentsOf: value)
    }

    func padded() -> [UInt8]? {
        guard buffer.count <= capacity else { return nil }
        return buffer + [UInt8](repeating: 0, count: capacity - buffer.count)
    }
}

/// Reads what `JournalWriter` wrote; every read is nil past the end.
private struct JournalReader {
    private let buffer: [UInt8]
    private var offset = 0

    init(_ buffer: [UInt8]) { self.buffer = buffer }

    mutating func byte() -> UInt8? {
        guard offset < buffer.count else { return nil }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func uint16() -> Int? {
        guard let low = byte(), let high = byte() else { return nil }
        return Int(low) | Int(high) << 8
    }

    mutating func int64() -> Int64? {
        guard offset + 8 <= buffer.count else { return nil }
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(buffer[offset + index]) }
        offset += 8
        return Int64(bitPattern: value)
    }

    mutating func double() -> Double? { int64().map { Double(bitPattern: UInt64(bitPattern: $0)) } }

    /// nil past the end; `.some(nil)` for an absent value.
    mutating func optionalDouble() -> Double?? {
        guard let present = byte() else { return nil }
        guard present != 0 else { return .some(nil) }
        guard let value = double() else { return nil }
        return .some(value)
    }

    mutating func optionalInt64() -> Int64?? {
        guard let present = byte() else { return nil }
        guard present != 0 else { return .some(nil) }
        guard let value = int64() else { return nil }
        return .some(value)
    }

    mutating func bytes() -> [UInt8]? {
        guard let count = uint16(), offset + count <= buffer.count else { return nil }
        defer { offset += count }
        return Array(buffer[offset..<(offset + count)])
    }

    mutating func string() -> String? { bytes().map { String(decoding: $0, as: UTF8.self) } }
}
