/// Whether bytes are one well-formed JSON value (RFC 8259), checked without building anything:
/// the quick query path asks this of every stored aggregate it splices into a reply (bit rot on
/// an SD card must never reach a reply), and Foundation's parser, which builds the whole object
/// tree, cost more than the rest of the answer.
enum JSONSyntax {
    static let maximumDepth = 64

    static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0) }
    }

    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        guard scanner.value(depth: 0) else { return false }
        scanner.skipSpace()
        return scanner.index == bytes.count
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < JSONSyntax.maximumDepth, let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), depth: depth, keyed: true)
            case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), depth: depth, keyed: false)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func container(close: UInt8, depth: Int, keyed: Bool) -> Bool {
            index += 1
            skipSpace()
            if current == close {
                index += 1
                return true
            }
            while true {
                if keyed {
                    guard current == UInt8(ascii: "\""), string() else { return false }
                    skipSpace()
                    guard current == UInt8(ascii: ":") else { return false }
                    index += 1
                    skipSpace()
                }
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                guard let byte = current else { return false }
                index += 1
                if byte == close { return true }
                guard byte == UInt8(ascii: ",") else { return false }
                skipSpace()
            }
        }

        /// A string, as RFC 8259 has it: no raw control characters, valid escapes, valid UTF-8.
        mutating func string() -> Bool {
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { return false }
                    if escaped == UInt8(ascii: "u") {
                        guard index + 4 < bytes.count else { return false }
                        for offset in 1...4 where !Self.isHexDigit(bytes[index + offset]) { return false }
                        index += 5
                    } else {
                        guard "\"\\/bfnrt".utf8.contains(escaped) else { return false }
                        index += 1
                    }
                case 0x00..<0x20:
                    return false
                case 0x80...:
                    guard utf8Sequence() else { return false }
                default:
                    index += 1
                }
            }
            return false
        }

        /// One multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
        mutating func utf8Sequence() -> Bool {
            let lead = bytes[index]
            let (length, low, high): (Int, UInt8, UInt8) =
                switch lead {
                case 0xC2...0xDF: (2, 0x80, 0xBF)
                case 0xE0: (3, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80, 0xBF)
                case 0xED: (3, 0x80, 0x9F)
                case 0xF0: (4, 0x90, 0xBF)
                case 0xF1...0xF3: (4, 0x80, 0xBF)
                case 0xF4: (4, 0x80, 0x8F)
                default: (0, 0, 0)
                }
            guard length > 0, index + length <= bytes.count else { return false }
            guard (low...high).contains(bytes[index + 1]) else { return false }
            for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return false }
            index += length
            return true
        }

        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, Self.isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { digits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let byte = current, Self.isDigit(byte) else { return false }
                digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                let negative = current == UInt8(ascii: "-")
                if negative || current == UInt8(ascii: "+") { index += 1 }
                guard let byte = current, Self.isDigit(byte) else { return false }
                let start = index
                digits()
                // Syntax allows any exponent, but one that overflows a double is no number any
                // reader can use (Foundation refuses it): a flipped bit, not a figure of ours.
                guard index - start <= 3 else { return false }
                var exponent = 0
                for offset in start..<index { exponent = exponent * 10 + Int(bytes[offset] - UInt8(ascii: "0")) }
                if !negative && exponent > 308 { return false }
            }
            return true
        }

        mutating func digits() {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        static func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
