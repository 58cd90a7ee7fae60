import Foundation
import Testing
import TestKit

@testable import Store

/// gpsd drops data for a client that reads too slowly, silently on the agent's side: the agent
/// must never be that client. A receiver at 10 Hz, and a second client (gpspipe) on the same
/// gpsd as the reference of what gpsd sent.
@Suite("Fault: GPS at 10 Hz", .enabled(if: FaultSuite.enabled, FaultSuite.reason))
struct GPSRateFaults {
    /// NMEA for `count` fixes one second apart (GGA + RMC each), from 2026-11-22 10:00:00 UTC,
    /// walking north-east: synthesised, so every fix has its own time.
    static func nmea(count: Int) -> String {
        func checksum(_ body: String) -> String { String(format: "%02X", body.utf8.reduce(0) { $0 ^ $1 }) }
        var lines: [String] = []
        for index in 0..<count {
            let seconds = 10 * 3600 + index
            let time = String(format: "%02d%02d%02d.000", seconds / 3600, seconds / 60 % 60, seconds % 60)
            let lat = String(format: "5230.%04d", 1000 + index)
            let lon = String(format: "01324.%04d", 2000 + index)
            let gga = "GPGGA,\(time),\(lat),N,\(lon),E,1,08,1.0,50.0,M,40.0,M,,"
            let rmc = "GPRMC,\(time),A,\(lat),N,\(lon),E,2.0,45.0,221126,,,A"
            lines += ["$\(gga)*\(checksum(gga))", "$\(rmc)*\(checksum(rmc))"]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// 600 fixes at 10 Hz through gpsfake to the agent and to gpspipe, once, for the two claims
    /// below; the agent, gpsfake and the broker are stopped before the outcome is handed out.
    struct TenHertz: Sendable {
        let expected: Int
        let missing: Int
        let dropped: [String: Int]?
        let exitStatus: Int32?
    }

    static let tenHertzOutcome = Task { () async throws -> TenHertz in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("gps-10hz")
        let capture = try directory.write("10hz.log", "# Name: synthesised 10 Hz receiver\n" + Self.nmea(count: 600))
        // Two sentences per fix: a sentence every 50 ms is 10 fixes a second.
        let gps = try await GPSFake(capture: capture, cycle: 0.05, once: true, linger: 2)
        let reference = try ManagedProcess(
            name: "gpspipe", executable: Tools.find("gpspipe"), arguments: ["-w", "127.0.0.1:\(gps.port)"])
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nstatus_interval_s = 1\n", environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "0"], start: false)
        try agent.addToConfig(section: "gps", lines: ["max_rate_hz = 10"])
        try agent.start()
        _ = await gps.process.waitForExit(timeout: 120)
        reference.stop()
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let sent: [Int64] = reference.lines.compactMap { line in
            guard line.contains("\"class\":\"TPV\""), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                (object["mode"] as? Int ?? 0) >= 2, let time = (object["time"] as? String).flatMap(formatter.date(from:))
            else { return nil }
            return time.unixMs
        }
        try await Task.sleep(for: .seconds(2))  // the last fixes committed, a status with the counts
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let statement = try db.statement("SELECT ts_ms FROM fix ORDER BY ts_ms")
        var stored: [Int64] = []
        while try statement.step() { stored.append(statement.int64(0)) }
        let first = try #require(stored.first, "no fix stored; log:\n\(agent.log.suffix(2000))")
        // Both clients connected within a moment of each other: compare from the agent's first fix.
        let expected = sent.filter { $0 >= first }
        let missing = Set(expected).subtracting(stored)
        let latest = status.messages.last { $0.json?["state"] as? String == "online" }
        let dropped = (latest?.json?["gps"] as? [String: Any])?["dropped"] as? [String: Int]
        let exitStatus = agent.stop()
        FaultSuite.report(
            "GPS at 10 Hz, 600 fixes (gpsfake, gpspipe as reference)",
            "\(expected.count - missing.count)/\(expected.count) fixes gpsd sent stored; queue_overflow \(dropped?["queue_overflow"] ?? -1), thinned \(dropped?["thinned"] ?? -1)")
        return TenHertz(expected: expected.count, missing: missing.count, dropped: dropped, exitStatus: exitStatus)
    }

    @Test("600 fixes at 10 Hz: every fix gpsd sent another client is stored by the agent")
    func tenHertz() async throws {
        let outcome = try await Self.tenHertzOutcome.value
        #expect(outcome.expected >= 500, "gpsd reported \(outcome.expected) fixes to the reference client")
        #expect(outcome.missing == 0, "\(outcome.missing) of \(outcome.expected) fixes gpsd sent are not stored")
        #expect(outcome.exitStatus == 0)
    }

    @Test("600 fixes at 10 Hz: status reports queue_overflow 0")
    func tenHertzNoOverflow() async throws {
        #expect(try await Self.tenHertzOutcome.value.dropped?["queue_overflow"] == 0)
    }
}
