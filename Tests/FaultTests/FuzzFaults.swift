import Foundation
import SensorBridge
import Testing
import TestKit

@testable import Agent

@Suite("Fault: fuzzed input", .enabled(if: FaultSuite.enabled, FaultSuite.reason))
struct FuzzFaults {
    static let seeds: [[UInt8]] = [
        "2026-11-21", #"{"date":"2026-11-21","include":["health","location","track","hr"],"track":"full","format":"gpx","reply_to":"r/x"}"#,
        #""2026-11-21""#, #"{"date":"2026-02-29"}"#,
        #"{"ts":"2026-11-21T08:00:04.000Z","seq":4,"sensor":"nsr-strap","raw":"164680036003","bpm":70,"rr":[875,844]}"#,
        #"{"sensor":"s","raw":"1f4a01e803d00700"}"#, #"{"sensor":"s","raw":"06"}"#,
    ].map { Array($0.utf8) }

    /// One mutation of a seed: flips, insertions, deletions, truncation, splicing, or plain noise.
    static func mutate(_ seed: [UInt8], _ generator: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            switch Int.random(in: 0..<7, using: &generator) {
            case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
            case 1: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
            case 2 where !bytes.isEmpty: bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator))
            case 3: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            case 4: bytes += seeds[Int.random(in: 0..<seeds.count, using: &generator)].prefix(Int.random(in: 0...40, using: &generator))
            case 5:
                let interesting: [String] = ["{", "}", "[", "]", "\"", ":", ",", "null", "1e999", "-0", "\\u0000", "\u{FEFF}", "99999999999999999999"]
                bytes.insert(contentsOf: Array(interesting[Int.random(in: 0..<interesting.count, using: &generator)].utf8),
                             at: Int.random(in: 0...bytes.count, using: &generator))
            default: bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
        }
        return bytes
    }

    @Test("1 000 000 random and mutated query payloads and bridge lines through the parsers: no crash, every one accepted or refused")
    func parsers() throws {
        var generator = SeededGenerator(seed: 2026)
        var accepted = (query: 0, bridge: 0)
        let started = Date()
        for _ in 0..<1_000_000 {
            let input = Self.mutate(Self.seeds[Int.random(in: 0..<Self.seeds.count, using: &generator)], &generator)
            if case .success = QueryRequest.parse(input) { accepted.query += 1 }
            if case .success = BridgeMessage.parse(input) { accepted.bridge += 1 }
            _ = HeartRateMeasurement.parse(input)
            var splitter = LineSplitter(maxBytes: 256)
            _ = splitter.feed(input)
        }
        let elapsed = Date().timeIntervalSince(started)
        FaultSuite.report(
            "fuzz: parsers in-process",
            "1 000 000 inputs through the query, bridge-line, 0x2A37 and line parsers in \(FaultSuite.format(elapsed)) s: no crash; accepted \(accepted.query) as queries, \(accepted.bridge) as bridge lines")
    }

    @Test("10 000 random or mutated requests over the broker: the agent stays up and every request gets exactly one reply")
    func overTheBroker() async throws {
        // Unlimited queue for the one subscriber taking all the replies (mosquitto's default drops past 1000).
        let broker = try MosquittoBroker(extraConfig: "max_queued_messages 0\n")
        let replies = try await MQTTSubscriber(port: broker.port, filter: "reply/fuzz")
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"none\"\n[query]\nrate_per_s = 10000\nburst = 10000\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await agent.process!.waitForLine(containing: "Starting service sl-service=QueryService")
        try await Wait.until(timeout: 10, "the agent subscribed") { agent.log.contains("MQTT connected") }
        var generator = SeededGenerator(seed: 99)
        // Printable mutations (mosquitto_pub -l splits on newlines), and the burst generator's mix.
        let mutated = (0..<5000).map { _ in
            String(decoding: Self.mutate(Self.seeds[Int.random(in: 0..<4, using: &generator)], &generator).map { $0 == 0x0A || $0 == 0x0D || $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
                .replacingOccurrences(of: "\n", with: " ")
        }.map { $0.isEmpty ? " " : $0 }
        let lines = mutated + RequestBurst.payloads(count: 5000, date: "2026-11-21", seed: 5)
        let directory = try TemporaryDirectory()
        let started = Date()
        let burst = try RequestBurst.start(port: broker.port, topic: "keepalive/testpi/selection/date", lines: lines, responseTopic: "reply/fuzz", in: directory)
        #expect(await burst.waitForExit(timeout: 120) == 0)
        let all = try await replies.waitFor(count: lines.count, timeout: 120, "a reply to each of \(lines.count) requests") { _ in true }
        let elapsed = Date().timeIntervalSince(started)
        #expect(all.count == lines.count, "exactly one reply each")
        #expect(agent.process?.isRunning == true)
        let statuses = Dictionary(grouping: all, by: \.userProperties).mapValues(\.count).sorted { $0.key < $1.key }
        FaultSuite.report(
            "fuzz: requests over the broker",
            "\(lines.count) requests → \(all.count) replies in \(FaultSuite.format(elapsed)) s (\(statuses.map { "\($0.key.replacingOccurrences(of: "status:", with: "")): \($0.value)" }.joined(separator: ", "))); agent up")
        #expect(agent.stop() == 0)
    }
}
