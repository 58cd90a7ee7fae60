/// One commit window's rows as the body of one fixed-size slot of the ingest journal
/// (JournalFile.swift), packed little-endian. Schema-7 files kept the same bodies, 464 bytes, in
/// a table; `decode` reads every layout written since (the zero padding is not read).
///
/// Layout: seq (i64; 0 = empty), then a u16 whose bits 15 and 14 say which layout follows:
/// - both (`tagged`, since the sample kinds became a type): a u8 count of kinds, then for each
///   its name (`SampleKind.name`, u16 length + UTF-8), a u16 row count and its rows, each
///   written by its kind (`SampleKind.encode`);
/// - bit 15 only (schema 13): the u16 is the fix count, then heart-rate and step counts (u16
///   each) and the rows of those three kinds, each notification and step record ending with its
///   optional `origin`;
/// - neither (before schema 13): the same without origins.
///
/// Optional numbers are preceded by a presence byte; strings and byte strings by a u16 length.
/// A window that does not fit (a 10 Hz strap, a backlog) is written to the tables directly:
/// `encode` answers nil. A slot naming a kind this build does not know (written by a newer one)
/// is not read (`decode` answers nil, and the ring says so).
struct JournalEntry: Equatable {
    var seq: Int64
    var rows = SampleBatch()

    /// Bytes of a slot's body: a 4 KiB slot less its check.
    static let bodySize = JournalFile.bodySize

    var isEmpty: Bool { rows.isEmpty }

    /// Bit 15 of the u16 after seq: the rows carry their origins (schema 13's layout).
    static let withOrigins = 0x8000
    /// Bits 15 and 14: the rows are listed by kind.
    static let tagged = 0xC000

    /// The slot body, zero-padded to `bodySize`; nil when the rows do not fit.
    func encode() -> [UInt8]? {
        var out = JournalWriter(capacity: Self.bodySize)
        out.int64(seq)
        out.uint16(Self.tagged)
        let kinds = rows.kinds
        out.byte(UInt8(kinds.count))
        for kindRows in kinds {
            out.string(kindRows.name)
            out.uint16(kindRows.count)
            kindRows.encode(into: &out)
        }
        return out.padded()
    }

    /// The rows of a slot body; nil for bytes this code did not write.
    static func decode(_ body: [UInt8]) -> JournalEntry? {
        var input = JournalReader(body)
        guard let seq = input.int64(), let layout = input.uint16() else { return nil }
        var entry = JournalEntry(seq: seq)
        if layout == tagged {
            guard let kindCount = input.byte() else { return nil }
            for _ in 0..<kindCount {
                guard let name = input.string(), let kind = SampleKinds.named(name), let count = input.uint16(),
                    let rows = kind.decodeRows(count: count, from: &input, withOrigins: true)
                else { return nil }
                entry.rows.set(rows)
            }
            return entry
        }
        // Schema 13 and before: three kinds, counted up front.
        let hasOrigins = layout & withOrigins != 0
        guard let heartRateCount = input.uint16(), let stepCount = input.uint16() else { return nil }
        let counts: [(any SampleKind.Type, Int)] = [
            (FixKind.self, layout & ~withOrigins), (HeartRateKind.self, heartRateCount), (StepRecordKind.self, stepCount),
        ]
        for (kind, count) in counts {
            guard let rows = kind.decodeRows(count: count, from: &input, withOrigins: hasOrigins) else { return nil }
            entry.rows.set(rows)
        }
        return entry
    }
}
