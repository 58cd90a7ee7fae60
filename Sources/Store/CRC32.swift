/// CRC-32 (IEEE 802.3, the polynomial of zlib, gzip and PNG; reflected, 0xEDB88320): the
/// check of an ingest journal slot (JournalFile.swift). Written here, 20 lines, rather than a
/// C target for zlib's `crc32`, which the agent would link for nothing else.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The little-endian bytes of `words`, to checksum numbers with the text around them.
    static func bytes(_ words: [UInt64]) -> [UInt8] {
        words.flatMap { word in stride(from: UInt64(0), to: 64, by: 8).map { UInt8(truncatingIfNeeded: word >> $0) } }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
