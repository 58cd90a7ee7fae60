import Foundation
import Testing
import TestKit

@testable import Store

/// Nothing measured is lost: a bridge's backlog is stored whole (the reader waits for the writer
/// and the bridge waits for the reader), and what is dropped is counted in `status`.
@Suite("Backpressure and drop counts", .serialized)
struct BackpressureTests {
    /// A counter from the newest status: `section.object.key` (e.g. hr, dropped, malformed).
    static func counter(_ message: MQTTSubscriber.Message?, _ section: String, _ object: String, _ key: String) -> Int? {
        ((message?.json?[section] as? [String: Any])?[object] as? [String: Any])?[key] as? Int
    }

    static func latestStatus(_ subscriber: MQTTSubscriber) -> MQTTSubscriber.Message? {
        subscriber.messages.last { $0.topic.hasSuffix("/status") && $0.json?["state"] as? String == "online" }
    }

    static func count(_ sql: StaticString, in path: String) -> Int64? {
        (try? SQLiteConnection(path: path, readOnly: true).scalarInt(sql)) ?? nil
    }

    @Test("a bridge command that writes 30 000 notifications at once: every one is stored, valid_samples of the day says so, nothing dropped")
    func commandBacklog() async throws {
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("backlog-command")
        let backlog = try BridgeBacklog(in: directory, count: 30_000)
        // One `cat` of the file, then the bridge stays (a restart would replay it).
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: backlog.commandBridge + "[schedule]\nstatus_interval_s = 1\ntoday_interval_s = 1\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await Wait.until(timeout: 60, "30 000 notifications stored (\(String(describing: Self.count("SELECT count(*) FROM hr_sample", in: agent.storePath))))") {
            Self.count("SELECT count(*) FROM hr_sample", in: agent.storePath) == 30_000
        }
        // What a user asks for: the day's valid samples, through the same query as over MQTT.
        #expect(try await agent.validSamples(on: backlog.day, expected: 30_000) == 30_000, "the day's valid_samples")
        try await status.waitFor(timeout: 10, "a status with the drop counts") { Self.counter($0, "hr", "dropped", "malformed") != nil }
        let final = Self.latestStatus(status)
        for reason in ["malformed", "too_long", "duplicate", "udp_overflow", "memory_limit"] {
            #expect(Self.counter(final, "hr", "dropped", reason) == 0, "hr.dropped.\(reason)")
        }
        #expect(agent.stop() == 0)
    }

    @Test("UDP cannot push back: of a burst of 20 000 datagrams every one is either stored or counted as udp_overflow")
    func udpOverflowCounted() async throws {
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let port = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\nstall_timeout_s = 1000\n[schedule]\nstatus_interval_s = 1\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        // Bound: the input reported ready (hr leaves "disconnected").
        try await status.waitFor(timeout: 20, "hr ready") { ($0.json?["hr"] as? [String: Any])?["state"] as? String == "stalled" }
        let sent = 20_000
        let baseMs = Date().unixMs - 3_600_000
        let lines = (0..<sent).map { BridgeBacklog.line(index: $0, timeMs: baseMs + Int64($0) * 10, sensor: "burst") }
        UDPSender.send(port: port, lines: lines)
        let stored = { Int(Self.count("SELECT count(*) FROM hr_sample", in: agent.storePath) ?? 0) }
        // The kernel reports its drops with the next datagram it delivers: a late marker carries them.
        var previous = -1
        for _ in 0..<60 where stored() != previous {
            previous = stored()
            try await Task.sleep(for: .milliseconds(500))
        }
        UDPSender.send(port: port, lines: [BridgeBacklog.line(index: sent, timeMs: baseMs + Int64(sent) * 10, sensor: "burst")])
        var overflow = 0
        try await Wait.until(timeout: 20, "stored + udp_overflow = \(sent + 1) (stored \(stored()), overflow \(overflow))") {
            overflow = Self.counter(Self.latestStatus(status), "hr", "dropped", "udp_overflow") ?? 0
            return stored() + overflow == sent + 1
        }
        #expect(overflow > 0, "a burst this size overflows a socket buffer; if not, the test shows nothing")
        #expect(agent.log.contains("reason=udp_overflow"), "the drop is logged")
        #expect(agent.stop() == 0)
    }

    @Test("malformed and over-long lines, and bridge stamps from before the agent existed: counted in status, the receive time used")
    func countedRejectionsAndFloor() async throws {
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("counted")
        let good = BridgeBacklog.line(index: 0, timeMs: Date().unixMs - 60_000, sensor: "ok")
        // A bridge whose clock was never set (1970, and 2000 as some RTC-less boards start).
        let unset1970 = BridgeBacklog.line(index: 1, timeMs: 5_000, sensor: "unset")
        let unset2000 = BridgeBacklog.line(index: 2, timeMs: 946_684_800_000, sensor: "unset")
        let long = #"{"sensor":"long","raw":"063c","pad":""# + String(repeating: "x", count: 5000) + #""}"#
        let input = try directory.write("lines.ndjson", [good, "not json", unset1970, long, unset2000].joined(separator: "\n") + "\n")
        let startedMs = Date().unixMs
        // Unsynchronised: the agent believes the bridge's clock — unless it says 1970.
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: BridgeBacklog.commandBridge(catting: input) + "[schedule]\nstatus_interval_s = 1\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "0"])
        try await Wait.until(timeout: 20, "three notifications stored") { Self.count("SELECT count(*) FROM hr_sample", in: agent.storePath) == 3 }
        let counted = try await status.waitFor(timeout: 10, "the counts in status") {
            Self.counter($0, "hr", "receive_time_used", "before_floor") == 2
        }
        #expect(Self.counter(counted, "hr", "dropped", "malformed") == 1)
        #expect(Self.counter(counted, "hr", "dropped", "too_long") == 1)
        #expect(Self.counter(counted, "hr", "receive_time_used", "no_stamp") == 0)
        // Every reason is listed, zeros included, for both sensors (GPS is off here).
        let gpsDropped = (counted.json?["gps"] as? [String: Any])?["dropped"] as? [String: Int]
        #expect(gpsDropped == ["rejected_fix": 0, "no_time": 0, "thinned": 0, "duplicate": 0, "queue_overflow": 0, "memory_limit": 0])
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let unset = try db.statement("SELECT ts_ms FROM hr_sample WHERE sensor = 'unset'")
        var times: [Int64] = []
        while try unset.step() { times.append(unset.int64(0)) }
        #expect(times.count == 2 && times.allSatisfy { $0 >= startedMs }, "stored at the receive time: \(times)")
        let believed = try db.statement("SELECT count(*) FROM hr_sample WHERE sensor = 'ok' AND ts_ms < ?").bind(.integer(startedMs))
        #expect(try believed.step() && believed.int(0) == 1, "a sane stamp is still the bridge's")
        #expect(agent.stop() == 0)
    }
}
