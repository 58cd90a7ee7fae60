import Foundation
import Testing
import TestKit

@testable import Store

/// Issue 45's property for the sleep night: the same night of strap notifications gives the same
/// stored rows and the same night in the day's reply however it reaches a real agent — one
/// backlog, hour by hour with the day asked after each (kept epochs and nights reused), its hours
/// in reverse order, or half of it, the agent killed (SIGKILL) and the bridge sending it all again.
/// The night is assembled from the real MIT-BIH hour (`AssembledNightLines`), 22:00–07:00 UTC,
/// two nights before the run (its stamps believed whatever the date the suite runs on). The bridge
/// is a real child (`tail -F` of a file the test appends to), so nothing is lost on the way.
@Suite("The sleep night does not depend on how its data arrives", .serialized)
struct SleepArrivalTests {
    enum Arrival: String, CaseIterable, Sendable {
        case oneBacklog = "one backlog, clock synchronised"
        case hourByHour = "hour by hour, the day asked after each, clock not synchronised"
        case hoursReversed = "its hours latest first, clock synchronised"
        case killedMidway = "half, agent killed, then all of it again, clock synchronised"
    }

    struct Observed: Sendable {
        let rows: Int64
        /// `sleep_s` and `sleep` of the day's reply, as JSON with sorted keys.
        let night: String
    }

    static let hourLines = 3600
    static let dayMs: Int64 = 86_400_000

    /// 22:00 UTC two evenings ago; the night is credited to yesterday's date.
    static let eveningMs = (Int64(Date().timeIntervalSince1970 * 1000) / dayMs - 2) * dayMs + 22 * 3_600_000
    static var morning: String { String(BridgeBacklog.timestamp(eveningMs + dayMs).prefix(10)) }

    static let observed = Task { () async throws -> [Arrival: Result<Observed, any Error>] in
        let lines = try AssembledNightLines.lines(startMs: eveningMs, hours: 9)
        let hours = stride(from: 0, to: lines.count, by: hourLines).map { Array(lines[$0..<min($0 + hourLines, lines.count)]) }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        var results: [Arrival: Result<Observed, any Error>] = [:]
        for arrival in Arrival.allCases {
            results[arrival] = await captured { try await run(arrival, hours: hours, total: lines.count, brokerPort: broker.port) }
        }
        return results
    }

    static func run(_ arrival: Arrival, hours: [[String]], total: Int, brokerPort: Int) async throws -> Observed {
        let directory = try TemporaryDirectory("sleep-arrival")
        let feed = directory.file("bridge.ndjson")
        _ = FileManager.default.createFile(atPath: feed, contents: nil)
        let config = "[hr]\ntransport = \"command\"\ncommand = [\"/usr/bin/tail\", \"-n\", \"+1\", \"-F\", \"\(feed)\"]\nstall_timeout_s = 600\n"
        let synchronised = arrival == .hourByHour ? "0" : "1"
        func start() throws -> AgentProcess {
            try AgentProcess(
                brokerPort: brokerPort, extraConfig: config, directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": synchronised])
        }
        func append(_ lines: [String]) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: feed))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((lines.joined(separator: "\n") + "\n").utf8))
        }
        func rows() -> Int64 {
            guard let db = try? SQLiteConnection(path: directory.file("keepalive.db"), readOnly: true) else { return 0 }
            return (try? db.scalarInt("SELECT count(*) FROM hr_sample WHERE sensor = 'h10'")) ?? 0
        }
        func stored(_ count: Int, _ agent: AgentProcess) async throws {
            try await Wait.until(timeout: 120, "\(arrival.rawValue): \(count) notifications stored, \(rows()) so far; log:\n\(agent.log.suffix(1500))") {
                rows() >= Int64(count)
            }
        }
        var agent = try start()
        switch arrival {
        case .oneBacklog:
            try append(hours.flatMap { $0 })
        case .hourByHour:
            var sent = 0
            for hour in hours {
                try append(hour)
                sent += hour.count
                try await stored(sent, agent)
                _ = try await agent.queryReply([morning])
            }
        case .hoursReversed:
            var sent = 0
            for hour in hours.reversed() {
                try append(hour)
                sent += hour.count
                try await stored(sent, agent)
            }
        case .killedMidway:
            let half = hours.count / 2
            try append(hours.prefix(half).flatMap { $0 })
            try await stored(hours.prefix(half).reduce(0) { $0 + $1.count }, agent)
            agent.kill9()
            agent = try start()
            // The new child reads the file from its first line: the first half again, then the rest.
            try append(hours.dropFirst(half).flatMap { $0 })
        }
        try await stored(total, agent)
        let reply = try #require(try await agent.queryReply([morning]), "\(arrival.rawValue): no reply")
        agent.stop()
        let health = try #require(reply["health"] as? [String: Any], "\(arrival.rawValue): \(reply)")
        let night: [String: Any] = ["sleep_s": health["sleep_s"] ?? NSNull(), "sleep": health["sleep"] ?? NSNull()]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: night, options: [.sortedKeys]), as: UTF8.self)
        return Observed(rows: rows(), night: text)
    }

    @Test("the same rows and the same night, field for field, however the night arrives")
    func sameNight() async throws {
        let results = try await Self.observed.value
        let reference = try #require(try results[.oneBacklog]?.get())
        let expected = try AssembledNightLines.lines(startMs: Self.eveningMs, hours: 9).count
        #expect(reference.rows == Int64(expected), "every notification stored once")
        #expect(reference.night.contains("\"efficiency\""), "a night was found: \(reference.night)")
        print("sleep arrival: \(Arrival.oneBacklog.rawValue): \(reference.night)")
        for arrival in Arrival.allCases where arrival != .oneBacklog {
            let observed = try #require(try results[arrival]?.get(), "\(arrival.rawValue)")
            #expect(observed.rows == reference.rows, "\(arrival.rawValue): \(observed.rows) rows, \(reference.rows) in one backlog")
            #expect(observed.night == reference.night, "\(arrival.rawValue):\n\(observed.night)\none backlog:\n\(reference.night)")
        }
    }
}
