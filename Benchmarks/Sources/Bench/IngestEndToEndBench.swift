import Foundation
import Store
import TestKit

/// A bridge backlog through the whole agent: 100 000 heart-rate notifications (two days ago,
/// 2 Hz) written by a `command` bridge in one `cat`, from launching the packaged agent until all
/// are stored — pipe, line splitting, parsing, the sample writer's batches, SQLite. Then the
/// day's `valid_samples` through `keepalive query`, and the agent's peak memory meanwhile.
/// Baseline: Python's sqlite3 `executemany` of the same rows in one transaction, into a file laid
/// out by the store (scripts/bench-executemany.py).
enum IngestEndToEndBench {
    static let notifications = Int(ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_E2E_COUNT"] ?? "100000") ?? 100_000

    static func run(into table: inout BenchTable) async throws {
        let directory = try TemporaryDirectory("bench-e2e")
        let backlog = try BridgeBacklog(in: directory, count: notifications)
        let baseline = try await executemanySeconds(backlog: backlog, store: directory.file("python.db"))

        let (seconds, peakKiB, stored, config) = try await storeAll(backlogBridge: backlog.commandBridge, in: directory, name: "store")
        let validSamples = try await validSamples(day: backlog.day, config: config, in: directory)
        table.add(
            "ingest end to end: \(notifications) HR notifications from a `command` bridge (pipe → parse → store), all \(stored) stored, valid_samples \(validSamples.map(String.init) ?? "?")",
            Double(notifications) / seconds, "notifications/s",
            baseline: "Python sqlite3 executemany, same rows, one transaction", Double(notifications) / baseline,
            higherIsBetter: true, target: "≥ 0.3×")
        table.add("ingest end to end: time to store all \(notifications)", seconds, "s", baseline: "—", 0, higherIsBetter: false, target: "≤ 50 s")
        table.add("ingest end to end: agent peak RSS (VmHWM) while the backlog streamed in", Double(peakKiB) / 1024, "MiB",
                  baseline: "—", 0, higherIsBetter: false)

        // The same backlog from a bridge whose clock was never set (1970 stamps, its uptime): every
        // notification stored at its receive time and named by its origin, which the store checks
        // (docs/contract.md, "Replays"): what telling replays by origin costs.
        let clockless = try directory.write("clockless.ndjson", try String(contentsOfFile: backlog.path, encoding: .utf8)
            .split(separator: "\n").enumerated().map { index, line in
                line.replacingOccurrences(of: #"\"ts\":\"[^\"]*\""#, with: "\"ts\":\"\(BridgeBacklog.timestamp(Int64(12_000 + index * 500)))\"",
                                          options: .regularExpression)
            }.joined(separator: "\n") + "\n")
        let (clocklessSeconds, _, clocklessStored, _) = try await storeAll(
            backlogBridge: BridgeBacklog.commandBridge(catting: clockless), in: directory, name: "clockless")
        table.add(
            "ingest end to end: the same from a clockless bridge (receive times, each row checked by origin), all \(clocklessStored) stored",
            Double(notifications) / clocklessSeconds, "notifications/s",
            baseline: "the stamped backlog above, same run", Double(notifications) / seconds, higherIsBetter: true)
    }

    /// Launches the agent with `backlogBridge` as its `[hr]` section and waits until all
    /// `notifications` are stored: seconds from launch, the agent's peak RSS, rows stored, its config.
    static func storeAll(backlogBridge: String, in directory: TemporaryDirectory, name: String) async throws -> (Double, Int, Int64, String) {
        let storePath = directory.file("\(name).db")
        let config = try directory.write("\(name).toml", """
            [device]
            id = "bench"
            timezone = "UTC"
            [mqtt]
            port = \(Ports.free())
            [store]
            path = "\(storePath)"
            [gps]
            enabled = false
            \(backlogBridge)
            [schedule]
            today_interval_s = 1
            """)
        let launched = DispatchTime.now()
        let agent = try ManagedProcess(
            name: "keepalive", executable: BenchAgent.binary, arguments: ["run", "--config", config],
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        var stored: Int64 = 0
        var peakKiB = 0
        var reader: SQLiteConnection?
        while stored < Int64(notifications) {
            guard agent.isRunning, Double(DispatchTime.now().uptimeNanoseconds - launched.uptimeNanoseconds) / 1e9 < 300 else {
                throw WaitTimeout(description: "the agent stored \(stored) of \(notifications) in 300 s: \(agent.text.suffix(2000))")
            }
            usleep(10_000)
            peakKiB = (try? ProcessSample(pid: agent.pid).peakRSSKiB) ?? peakKiB
            if reader == nil, FileManager.default.fileExists(atPath: storePath) { reader = try? SQLiteConnection(path: storePath, readOnly: true) }
            stored = ((try? reader?.scalarInt("SELECT count(*) FROM hr_sample")) ?? nil) ?? 0
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - launched.uptimeNanoseconds) / 1e9
        return (seconds, peakKiB, stored, config)
    }

    /// The baseline's insert time (seconds).
    static func executemanySeconds(backlog: BridgeBacklog, store: String) async throws -> Double {
        _ = try Store(path: store)  // the store's own layout
        let python = try ManagedProcess(
            name: "executemany", executable: Tools.find("python3"),
            arguments: ["\(Tools.packageRoot)/scripts/bench-executemany.py", store, backlog.path])
        guard await python.waitForExit(timeout: 300) == 0, let seconds = Double(python.lines.last ?? "") else {
            throw WaitTimeout(description: "bench-executemany.py failed: \(python.text)")
        }
        return seconds
    }

    /// The day's `health.heart_rate.valid_samples` from `keepalive query`, once it stops changing
    /// (the final aggregate is republished as the backlog lands).
    static func validSamples(day: String, config: String, in directory: TemporaryDirectory) async throws -> Int? {
        var value: Int?
        for _ in 0..<30 {
            let out = directory.file("query.json")
            let query = try ManagedProcess(
                name: "keepalive query", executable: "/bin/sh",
                arguments: ["-c", "exec \"$0\" \"$@\" >\(out)", BenchAgent.binary, "query", day, "--config", config])
            _ = await query.waitForExit(timeout: 60)
            let reply = try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
            value = BridgeBacklog.validSamples(reply)
            if value == notifications { break }
            try await Task.sleep(for: .seconds(1))
        }
        return value
    }
}
