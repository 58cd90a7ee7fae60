import Foundation

/// One record of the MIT-BIH Polysomnographic Database (slpdb), read from its own WFDB files under
/// Tests/Fixtures/sleep/slpdb (verbatim, see the LICENSE.md there): its beats as a strap's
/// notifications and its scored 30-s epochs. The same reading as scripts/sleepdata/slpdb.py, which
/// evaluates every record end to end (docs/sleep.md, "Accuracy").
public struct SlpdbRecord: Sendable {
    /// Seconds since the record's start.
    public var beats: [Double]
    /// 30-s epoch index since the start → asleep (stages 1–4, R) or not (W); MT and unscored left out.
    public var scored: [Int: Bool]
    /// The start's clock time, seconds after midnight.
    public var startClockSeconds: Int
    public var age: Int?
    public var male: Bool?

    public var scoredSleepSeconds: Int { scored.values.filter { $0 }.count * 30 }
    public var scoredSeconds: Int { scored.count * 30 }

    public init(_ name: String) throws {
        let header = try String(contentsOfFile: Tools.fixture("sleep/slpdb/\(name).hea"), encoding: .utf8).split(separator: "\n")
        let first = header[0].split(separator: " ")
        let fs = Double(first[2].split(separator: "/")[0]) ?? 250
        let clock = first[4].split(separator: ":").compactMap { Double($0) }
        startClockSeconds = Int(clock[0] * 3600 + clock[1] * 60 + clock[2])
        let person = header.first { $0.hasPrefix("#") }?.dropFirst().split(separator: " ") ?? []
        age = person.first.flatMap { Int($0) }
        male = person.count > 1 ? person[1] == "M" : nil
        let beatCodes: Set<Int> = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 25, 30, 34, 35, 38, 41]
        beats = try Self.annotations(Tools.fixture("sleep/slpdb/\(name).ecg")).filter { beatCodes.contains($0.code) }.map { Double($0.sample) / fs }
        var scored: [Int: Bool] = [:]
        for note in try Self.annotations(Tools.fixture("sleep/slpdb/\(name).st")) {
            let stage = note.aux.split(separator: " ").first.map(String.init) ?? ""
            guard ["W", "1", "2", "3", "4", "R"].contains(stage) else { continue }
            scored[Int((Double(note.sample) / fs / 30).rounded())] = stage != "W"
        }
        self.scored = scored
    }

    /// WFDB "MIT format" annotations (WFDB Programmer's Guide, "Annotation files"): 16-bit words,
    /// a 6-bit code over a 10-bit time step; SKIP (59) carries a 32-bit step, 60–62 set fields,
    /// AUX (63) text for the previous annotation.
    static func annotations(_ path: String) throws -> [(sample: Int, code: Int, aux: String)] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var out: [(sample: Int, code: Int, aux: String)] = []
        var sample = 0
        var index = 0
        while index + 1 < data.count {
            let word = Int(data[index]) | Int(data[index + 1]) << 8
            index += 2
            let (code, step) = (word >> 10, word & 0x3FF)
            if code == 0 && step == 0 { break }
            switch code {
            case 59:
                guard index + 3 < data.count else { break }
                let value = (Int(data[index]) | Int(data[index + 1]) << 8) << 16 | Int(data[index + 2]) | Int(data[index + 3]) << 8
                sample += value >= 1 << 31 ? value - (1 << 32) : value
                index += 4
            case 60, 61, 62: continue
            case 63:
                let end = min(data.count, index + step)
                if !out.isEmpty {
                    out[out.count - 1].aux = String(decoding: data[index..<end].prefix { $0 != 0 }, as: UTF8.self)
                }
                index += step + (step & 1)
            default:
                sample += step
                out.append((sample, code, ""))
            }
        }
        return out
    }

    /// Bridge lines as a strap sends them (scripts/sleepdata/slpdb.py, `strap_lines`): one a second
    /// after the first beat, with the RR intervals (1/1024 s) of the beats that ended in it; a
    /// second without a beat repeats the heart rate; 3 s without one, contact not detected.
    public func lines(startMs: Int64, sensor: String = "slpdb") -> [String] {
        guard let firstBeat = beats.first, let lastBeat = beats.last else { return [] }
        var lines: [String] = []
        var next = 1
        var previousBeat = firstBeat
        var bpm = 0
        var tick = firstBeat.rounded(.up)
        while tick <= lastBeat.rounded(.up) {
            var rrs: [Int] = []
            while next < beats.count && beats[next] <= tick {
                let interval = beats[next] - beats[next - 1]
                if interval <= 3 { rrs.append(Int((interval * 1024).rounded())) }
                previousBeat = beats[next]
                next += 1
            }
            let raw: String
            if let last = rrs.last {
                bpm = min(255, Int((60 * 1024 / Double(last)).rounded()))
                raw = String(format: "16%02x", bpm) + rrs.map { String(format: "%02x%02x", $0 & 0xFF, $0 >> 8) }.joined()
            } else if tick - previousBeat <= 3 && bpm > 0 {
                raw = String(format: "06%02x", bpm)
            } else {
                raw = "0400"
            }
            lines.append(#"{"ts":"\#(BridgeBacklog.timestamp(startMs + Int64(tick * 1000)))","sensor":"\#(sensor)","raw":"\#(raw)"}"#)
            tick += 1
        }
        return lines
    }
}
