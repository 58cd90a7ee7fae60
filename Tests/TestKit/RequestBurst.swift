import Foundation

/// Many per-date requests at once through one `mosquitto_pub -l` (one message per line), as a
/// misbehaving client or a fuzzer would send them.
public enum RequestBurst {
    /// `count` requests for `date`: valid ones, wrong types, bad dates, random printable bytes.
    public static func payloads(count: Int, date: String, seed: UInt64) -> [String] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { index in
            switch index % 6 {
            case 0: return date
            case 1: return #"{"date":"\#(date)","include":["health"]}"#
            case 2: return #"{"date":["\#(index)"]}"#
            case 3: return "{\"date\":\"2026-02-\(index % 40)\"}"
            default:
                // Random printable bytes (a newline would split the message).
                let length = Int.random(in: 1...200, using: &generator)
                return String((0..<length).map { _ in Character(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &generator))) })
            }
        }
    }

    /// Starts publishing `lines` to `topic` (QoS 1, v5) with `responseTopic`; wait on the process.
    public static func start(port: Int, topic: String, lines: [String], responseTopic: String, in directory: TemporaryDirectory) throws
        -> ManagedProcess
    {
        let file = try directory.write("requests-\(UInt32.random(in: 0...UInt32.max))", lines.joined(separator: "\n") + "\n")
        return try ManagedProcess(
            name: "mosquitto_pub -l", executable: "/bin/sh",
            arguments: ["-c", "exec \(Tools.mosquittoPub) -h 127.0.0.1 -p \(port) -V 5 -q 1 -t \(topic) -D publish response-topic \(responseTopic) -l < \(file)"])
    }
}

/// xorshift64*: the same "random" data on every run.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    public mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}
