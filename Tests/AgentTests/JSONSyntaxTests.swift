import Foundation
import Testing
import TestKit

@testable import Agent

/// The bit-rot check of the quick query path: JSON syntax, checked without parsing.
@Suite("JSON syntax check")
struct JSONSyntaxTests {
    static let aggregate = #"{"date":"2026-11-21","tz":"Europe/Berlin","final":true,"heart_rate":{"samples":3599,"avg":78.1,"zones_s":[1,2,3,4,5],"zone_scheme":{"kind":"hrr"},"rmssd_ms":null},"location":{"fixes":0,"bbox":[-37.7847933,175.3149017,-1e-7,2E+3]},"steps":null,"steps_estimated":false,"note":"caf\u00e9 \"quoted\" \\ / \b\f\n\r\t — ✓ 😀"}"#

    @Test("what the agent stores passes, and so do the small values first_fix and last_fix hold")
    func accepts() {
        for text in [Self.aggregate, "null", #"{"tst":1795248000,"lat":52.5,"lon":13.4}"#, "[]", "{}", " 0 ", "-0.5e-3", #""""#] {
            #expect(JSONSyntax.isValid(text), "\(text)")
        }
    }

    @Test("truncated, garbled, trailing commas, bad numbers, raw control characters, broken UTF-8 and deep nesting are refused")
    func refuses() {
        let bad = [
            "", " ", String(Self.aggregate.dropLast()), Self.aggregate + "x", #"{"a":1,}"#, "[1,]", "[01]", "[1.]", "[.5]", "[1e]", "[-]",
            "{\"a\"\u{01}:1}", "[\"\u{07}\"]", #"["\x"]"#, #"["\u12G4"]"#, "{a:1}", "[true false]", "tru", "nul", "[1 2]", "{\"a\" 1}",
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
        for text in bad { #expect(!JSONSyntax.isValid(text), "\(text.debugDescription)") }
        let invalidUTF8: [[UInt8]] = [[0x22, 0xC3, 0x22], [0x22, 0xE0, 0x80, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xFF, 0x22]]
        for bytes in invalidUTF8 {
            #expect(!bytes.withUnsafeBufferPointer { JSONSyntax.isValid($0) }, "\(bytes)")
        }
    }

    /// What matters is one direction: nothing it passes may be refused by a JSON parser (a reply
    /// must be valid JSON). It is stricter than Foundation in one place, which is safe (the day is
    /// then computed from its rows): Foundation takes a trailing comma (`[1,2,]`), RFC 8259 does not.
    @Test("on 20 000 corruptions of a stored aggregate (a byte flipped, cut or doubled) it never passes what Foundation refuses, and refuses only trailing commas Foundation passes")
    func agreesWithFoundation() {
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
            let ours = bytes.withUnsafeBufferPointer { JSONSyntax.isValid($0) }
            let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)) != nil
            guard ours != foundation else { continue }
            let text = String(decoding: bytes, as: UTF8.self)
            let trailingComma = text.range(of: #",\s*[\]}]"#, options: .regularExpression) != nil
            if ours || !trailingComma, disagreements.count < 5 { disagreements.append("\(text) ours \(ours)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }
}
