import Foundation
import Store
import TestKit

/// Issue 32: what a day's figures cost right after a backlog. A strap's backlog of
/// `KEEPALIVE_BENCH_BACKLOG_COUNT` (100 000) notifications (2 Hz, ≈ 14 h of one day two days ago,
/// synthesised by `BridgeBacklog`, the beats falling as a strap sends them; with
/// `KEEPALIVE_BENCH_BACKLOG_BEATS=one`, one beat in every notification, as the figures before
/// 2026-11-26 were taken) through a `command` bridge into the release agent, with a broker
/// set up as `deploy/` ships it (`set_tcp_nodelay true`); once all are stored:
/// - the first per-date query for that day (round trip), then queries for it for
///   `KEEPALIVE_BENCH_AFTER_S` (60) s, their p99 next to the broker's own round trip (an echo by
///   the same client, alternating);
/// - the agent's VmHWM after the ingest and after the queries;
/// - with the agent stopped and the day's aggregate made stale, `keepalive query <day>` (health +
///   location, and location alone): wall time and max RSS.
///
/// Each figure of this build is printed next to the same figure of another agent binary, run
/// the same way in the same run: `KEEPALIVE_BENCH_BASELINE_AGENT` (e.g. a release build of the
/// commit before, made by scripts/bench.sh when `KEEPALIVE_BENCH_BASELINE_COMMIT` names one).
/// `KEEPALIVE_BENCH_QUERY_DAYS=30` spreads the queries after the first over the 30 days up to
/// yesterday (a backlog of 1 000 000 notifications covers six of them).
/// `KEEPALIVE_BENCH_SLOW_CORE=1` runs both agents and their command lines on one core at a 25 %
/// quota (`SlowCore`). Each binary is read from disk when launched, as after boot (`ColdBinary`).
enum BacklogQueryBench {
    struct Figures {
        var storeSeconds = 0.0
        var ingestPeakMiB = 0.0
        var firstQueryMs = 0.0
        var queryP99Ms = 0.0
        var echoP99Ms = 0.0
        var queries = 0
        var peakMiB = 0.0
        var cliMs = 0.0
        var cliMiB = 0.0
        var cliLocationMs = 0.0
        var cliLocationMiB = 0.0
    }

    static func run(into table: inout BenchTable) async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["KEEPALIVE_BENCH_BACKLOG_COUNT"] ?? "100000") ?? 100_000
        let afterS = Double(environment["KEEPALIVE_BENCH_AFTER_S"] ?? "60") ?? 60
        let slow = SlowCore.requested
        defer { if slow { SlowCore.remove() } }
        let now = try await measure(binary: BenchAgent.binary, count: count, afterS: afterS, slow: slow)
        let before = try await environment["KEEPALIVE_BENCH_BASELINE_AGENT"].asyncMap {
            try await measure(binary: $0, count: count, afterS: afterS, slow: slow)
        }
        let setting = "\(count) notifications\(slow ? ", \(SlowCore.label)" : "")"
        let baseline = "the baseline agent, same run"
        func row(_ name: String, _ value: KeyPath<Figures, Double>, _ unit: String, target: String = "") {
            table.add("\(name) (\(setting))", now[keyPath: value], unit, baseline: before == nil ? "—" : baseline,
                      before?[keyPath: value] ?? 0, higherIsBetter: false, target: target)
        }
        row("backlog: time to store all", \.storeSeconds, "s")
        row("backlog: agent VmHWM after the ingest", \.ingestPeakMiB, "MiB")
        row("backlog: first per-date query of the day, round trip", \.firstQueryMs, "ms", target: slow ? "≤ 400 ms" : "≤ 100 ms")
        row("backlog: query p99 over the \(Int(afterS)) s after (\(now.queries) queries)", \.queryP99Ms, "ms")
        table.add("backlog: query p99 over the \(Int(afterS)) s after (\(setting))", now.queryP99Ms, "ms",
                  baseline: "the broker's own round trip p99 (echo, same client)", now.echoP99Ms, higherIsBetter: false, target: "ratio ≤ 5×")
        row("backlog: agent VmHWM after the queries", \.peakMiB, "MiB", target: "≤ 40 MiB")
        row("`keepalive query` on the stale day: wall time", \.cliMs, "ms", target: "≤ 100 ms")
        row("`keepalive query` on the stale day: max RSS", \.cliMiB, "MiB", target: "≤ 40 MiB")
        row("`keepalive query --include location` on the stale day: wall time", \.cliLocationMs, "ms", target: "≤ 100 ms")
        row("`keepalive query --include location` on the stale day: max RSS", \.cliLocationMiB, "MiB", target: "≤ 40 MiB")
    }

    static func measure(binary: String, count: Int, afterS: Double, slow: Bool) async throws -> Figures {
        var figures = Figures()
        let directory = try TemporaryDirectory("bench-backlog-query")
        // 2 Hz from the start of a day far enough back that the whole backlog is in the past, and
        // near enough that none of it is older than the agent believes a bridge's stamps
        // (`BridgeService.maximumBacklog`, 7 days: older ones take their receive time and
        // collide as duplicates).
        let beats: BridgeBacklog.Beats = ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_BACKLOG_BEATS"] == "one" ? .onePerNotification : .asAStrapSends
        let backlog = try BridgeBacklog(in: directory, count: count, daysAgo: max(2, count / 172_800 + 1), beats: beats)
        let broker = try MosquittoBroker(extraConfig: "set_tcp_nodelay true\n")
        defer { broker.stop() }
        let storePath = directory.file("store.db")
        let config = try directory.write("config.toml", """
            [device]
            id = "bench"
            timezone = "UTC"
            [mqtt]
            port = \(broker.port)
            [store]
            path = "\(storePath)"
            [gps]
            enabled = false
            \(backlog.commandBridge)
            [query]
            rate_per_s = 10000
            burst = 10000
            """)
        let command = slow ? try SlowCore.wrap(binary, ["run", "--config", config]) : (binary, ["run", "--config", config])
        ColdBinary.evict(binary)
        let launched = DispatchTime.now()
        let agent = try ManagedProcess(
            name: "keepalive", executable: command.0, arguments: command.1, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        var stored: Int64 = 0
        var reader: SQLiteConnection?
        while stored < Int64(count) {
            guard agent.isRunning, elapsed(since: launched) < 900 else {
                throw WaitTimeout(description: "the agent stored \(stored) of \(count) in 900 s: \(agent.text.suffix(2000))")
            }
            usleep(10_000)
            if reader == nil, FileManager.default.fileExists(atPath: storePath) { reader = try? SQLiteConnection(path: storePath, readOnly: true) }
            stored = ((try? reader?.scalarInt("SELECT count(*) FROM hr_sample")) ?? nil) ?? 0
        }
        reader = nil
        figures.storeSeconds = elapsed(since: launched)
        figures.ingestPeakMiB = Double((try? ProcessSample(pid: agent.pid).peakRSSKiB) ?? 0) / 1024

        var client = try await Requester.connect(port: broker.port, lowLatency: true)
        defer { client.stop() }
        figures.firstQueryMs = try await client.query(backlog.day, round: 0, qos: .atLeastOnce)
        var queryTimes: [Double] = []
        var echoTimes: [Double] = []
        let after = DispatchTime.now()
        // KEEPALIVE_BENCH_QUERY_DAYS (1): the queries after the first go round that many days from the backlog's first.
        let spread = Int(ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_QUERY_DAYS"] ?? "1") ?? 1
        let yesterdayMs = (Date().unixMs / 86_400_000 - 1) * 86_400_000
        while elapsed(since: after) < afterS {
            let round = queryTimes.count + 1
            let day = spread <= 1 ? backlog.day : String(BridgeBacklog.timestamp(yesterdayMs - Int64(round % spread) * 86_400_000).prefix(10))
            echoTimes.append(try await client.echo(round: round, qos: .atLeastOnce))
            queryTimes.append(try await client.query(day, round: round, qos: .atLeastOnce))
        }
        figures.queries = queryTimes.count
        figures.queryP99Ms = percentile(queryTimes, 0.99)
        figures.echoP99Ms = percentile(echoTimes, 0.99)
        figures.peakMiB = Double((try? ProcessSample(pid: agent.pid).peakRSSKiB) ?? 0) / 1024
        agent.stop()

        // Stale: rows of the day stored after its aggregate was built (as a late backlog leaves it).
        let file = try SQLiteConnection(path: storePath)  // held: a statement does not keep its connection alive
        try file.statement("UPDATE day_aggregate SET built_hr_id = 0 WHERE date = ?").bind(.text(backlog.day)).run()
        (figures.cliMs, figures.cliMiB) = try await commandLine(binary, ["query", backlog.day, "--config", config], slow: slow, in: directory)
        (figures.cliLocationMs, figures.cliLocationMiB) = try await commandLine(
            binary, ["query", backlog.day, "--include", "location", "--config", config], slow: slow, in: directory)
        return figures
    }

    /// Wall time (ms) and max RSS (MiB) of one command, from Python's `getrusage(RUSAGE_CHILDREN)`.
    static func commandLine(_ binary: String, _ arguments: [String], slow: Bool, in directory: TemporaryDirectory) async throws
        -> (Double, Double)
    {
        let command = slow ? try SlowCore.wrap(binary, arguments) : (binary, arguments)
        ColdBinary.evict(binary)
        let script = """
            import resource, subprocess, sys, time
            start = time.monotonic()
            code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
            print(code, time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let process = try ManagedProcess(
            name: "keepalive query", executable: Tools.find("python3"), arguments: ["-c", script, command.0] + command.1)
        guard await process.waitForExit(timeout: 300) == 0, let parts = process.lines.last?.split(separator: " "), parts.count == 3,
            parts[0] == "0", let seconds = Double(parts[1]), let kib = Double(parts[2])
        else { throw WaitTimeout(description: "keepalive \(arguments.joined(separator: " ")) failed: \(process.text.suffix(2000))") }
        return (seconds * 1000, kib / 1024)
    }

    private static func elapsed(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
