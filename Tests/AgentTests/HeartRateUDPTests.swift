import Foundation
import Testing
import TestKit

@testable import Store

/// The `udp` heart-rate transport with the real recorded fixture.
@Suite("Heart rate over UDP")
struct HeartRateUDPTests {
    @Test("real bridge messages are stored once (a replay adds nothing), garbage is dropped, a silent bridge is reacquired")
    func udpIngest() async throws {
        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
        let port = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\nstall_timeout_s = 1\nreacquire_max_s = 1\n")
        try await agent.process!.waitForLine(containing: "Starting service sl-service=BridgeService")
        let day = HeartRateFixture.yesterday
        let fixture = try HeartRateFixture.lines(on: day)
        let first = Array(fixture.prefix(300))
        let count = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil }

        // Datagrams sent before the socket is bound, or while it is rebound (the bridge is "silent"
        // until data flows, stall_timeout 1 s), are lost, as UDP is: send again until all are in.
        // Harmless, and checked so: a copy is a replay, stored once (exactly 300 below).
        for attempt in 1...10 where count() != 300 {
            UDPSender.send(port: port, lines: first, linesPerDatagram: 10)
            try? await Wait.until(timeout: 3, "300 notifications stored (try \(attempt))") { count() == 300 }
        }
        #expect(count() == 300)

        // A replay plus garbage, then one new message as a marker: only the marker is new.
        UDPSender.send(port: port, lines: first, linesPerDatagram: 10)
        UDPSender.send(port: port, lines: ["garbage", #"{"sensor":"x","raw":"zz"}"#, #"{"sensor":"x","raw":"10"}"#])
        // The agent rebinds its socket when the bridge is silent (stall_timeout 1 s here); a
        // datagram sent in that instant is lost, as UDP is: resend the marker until it is stored.
        try await Wait.until(timeout: 10, "the marker stored and the garbage reported") {
            if count() != 301 { UDPSender.send(port: port, lines: [fixture[300]]) }
            if !agent.log.contains("reason=malformed") { UDPSender.send(port: port, lines: ["garbage"]) }
            return count() == 301 && agent.log.contains("reason=malformed")
        }
        #expect(count() == 301)
        #expect(agent.log.contains("reason=malformed"))

        // Silence: reacquired every stall_timeout (+ backoff capped at 1 s), counted, published.
        let reacquisitions = try await events.waitFor(count: 2, timeout: 15, "two hr_reacquire events") {
            $0.topic == "keepalive/testpi/event/hr_reacquire"
        }
        #expect(reacquisitions.prefix(2).map { $0.json?["count"] as? Int } == [1, 2])
        try await events.waitFor("status hr stalled") { ($0.json?["hr"] as? [String: Any])?["state"] as? String == "stalled" }

        // Stored exactly as the fixture says: bridge time, bpm and RR intervals.
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let statement = try db.statement("SELECT ts_ms, bpm, valid FROM hr_sample ORDER BY ts_ms LIMIT 1")
        #expect(try statement.step())
        #expect(statement.int64(0) == 1_795_248_001_000 + HeartRateFixture.shiftMs(to: day))  // 08:00:01Z, the fixture's first ts
        #expect(statement.int(1) == 90)
        #expect(statement.int(2) == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM rr_interval") ?? 0 > 300)
        #expect(agent.stop() == 0)
    }
}
