/// Cuts a byte stream into lines, bounded: a line longer than `maxBytes` is cut to
/// `maxBytes + 1` bytes (so the parser rejects it as too long, and it is counted) and the rest
/// of it, up to the next newline, is skipped.
struct LineSplitter {
    let maxBytes: Int
    private var current: [UInt8] = []
    private var skipping = false

    init(maxBytes: Int) { self.maxBytes = maxBytes }

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if !current.isEmpty { lines.append(current) }
                current.removeAll(keepingCapacity: true)
                skipping = false
            } else if !skipping {
                current.append(byte)
                if current.count > maxBytes {
                    lines.append(current)
                    current.removeAll(keepingCapacity: true)
                    skipping = true
                }
            }
        }
        return lines
    }
}
