import Foundation
import Testing
import TestKit

@testable import Store

/// The bit-rot check of the quick query path (`StoreReader.isValidJSON`, SQLite's `json_valid()`):
/// a stored aggregate is spliced into a reply only while its JSON is still JSON.
@Suite("Stored JSON check")
struct StoredJSONCheckTests {
    static let aggregate = #"{"date":"2026-11-21","tz":"Europe/Berlin","final":true,"heart_rate":{"samples":3599,"avg":78.1,"zones_s":[1,2,3,4,5],"zone_scheme":{"kind":"hrr"},"rmssd_ms":null},"location":{"fixes":0,"bbox":[-37.7847933,175.3149017,-1e-7,2E+3]},"steps":null,"steps_estimated":false,"note":"caf\u00e9 \"quoted\" \\ / \b\f\n\r\t — ✓ 😀"}"#

    /// A reader on a fresh store file (the check needs no table, only the connection).
    static func reader() throws -> StoreReader {
        let path = try TemporaryDirectory("json-check").file("k.db")
        _ = try Store(path: path)
        return try StoreReader(path: path)
    }

    @Test("what the agent stores passes, and so do the small values first_fix and last_fix hold")
    func accepts() throws {
        let reader = try Self.reader()
        for text in [Self.aggregate, "null", #"{"tst":1795248000,"lat":52.5,"lon":13.4}"#, "[]", "{}", " 0 ", "-0.5e-3", #""""#] {
            #expect(try reader.isValidJSON(text), "\(text)")
        }
    }

    @Test("truncated, garbled, trailing commas, bad numbers, raw control characters and JSON5 are refused")
    func refuses() throws {
        let reader = try Self.reader()
        let bad = [
            "", " ", String(Self.aggregate.dropLast()), Self.aggregate + "x", #"{"a":1,}"#, "[1,]", "[01]", "[1.]", "[.5]", "[1e]", "[-]",
            "{\"a\"\u{01}:1}", "[\"\u{07}\"]", #"["\x"]"#, #"["\u12G4"]"#, "{a:1}", "[true false]", "tru", "nul", "[1 2]", "{\"a\" 1}",
            "[0x1F]", "['a']", "[Infinity]", "[NaN]", "[+1]", "// c\n[]",
        ]
        for text in bad { #expect(try !reader.isValidJSON(text), "\(text.debugDescription)") }
    }

    /// What matters is one direction: nothing it passes may be refused by a JSON parser (a reply
    /// must be valid JSON). SQLite is stricter than Foundation in one place, which is safe (the day
    /// is then computed from its rows): Foundation takes a trailing comma (`[1,2,]`), RFC 8259 does
    /// not. Foundation refuses a number beyond a Double's range (`-37.7e47933`, a digit flipped to
    /// `e`), which RFC 8259 (section 6) leaves to each parser; SQLite passes it as JSON.
    /// The decimal exponents written in `text` (`…e-933` gives -933).
    static func exponents(in text: String) -> [Int] {
        let pattern = /[0-9][eE]([+-]?[0-9]+)/
        return text.matches(of: pattern).compactMap { Int($0.output.1) }
    }

    @Test("on 20 000 corruptions of a stored aggregate (a byte flipped, cut or doubled) it passes nothing Foundation refuses but numbers out of a Double's range")
    func neverPassesWhatFoundationRefuses() throws {
        let reader = try Self.reader()
        var generator = SplitMix(seed: 2026)
        let original = Array(Self.aggregate.utf8)
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            var bytes = original
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[position] = UInt8.random(in: 0...255, using: &generator)
            case 1: bytes.removeSubrange(position...)
            default: bytes.insert(bytes[position], at: position)
            }
            // As the store hands it back: a column's bytes decoded as UTF-8.
            let text = String(decoding: bytes, as: UTF8.self)
            let ours = try reader.isValidJSON(text)
            let foundation = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil
            guard ours != foundation else { continue }
            let trailingComma = text.range(of: #",\s*[\]}]"#, options: .regularExpression) != nil
            let outOfRange = Self.exponents(in: text).contains { abs($0) > 308 }
            let allowed = ours ? outOfRange : trailingComma
            if !allowed, disagreements.count < 5 { disagreements.append("\(text) ours \(ours)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }
}
