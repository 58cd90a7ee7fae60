import Foundation
import Store
import TestKit

/// The release agent at 1 Hz GPS (gpsfake, a real capture) + 1 Hz heart rate with RR (UDP) for
/// `KEEPALIVE_BENCH_STEADY_S` (600) seconds: CPU, peak RSS, private memory, and bytes written to
/// disk against the floor (one 4 KiB page per commit window) and the bytes of data it stored. Also start-up time to READY=1 and the
/// stripped binary size.
enum SteadyStateBench {
    static func run(into table: inout BenchTable) async throws {
        let environment = ProcessInfo.processInfo.environment
        let duration = Double(environment["KEEPALIVE_BENCH_STEADY_S"] ?? "600") ?? 600
        // The store's commit window: what write amplification mostly depends on.
        let batchMs = Int(environment["KEEPALIVE_BENCH_BATCH_MS"] ?? "1000") ?? 1000
        let synchronous = environment["KEEPALIVE_BENCH_SYNCHRONOUS"] == "normal" ? "normal" : "full"
        // `[store] fold_s`: 0 measures the tables written at every commit (no ingest journal).
        let foldS = Int(environment["KEEPALIVE_BENCH_FOLD_S"] ?? "60") ?? 60
        // A store file made beforehand with this page size (the agent keeps an existing file's):
        // 4096 measures the layout before 512-byte pages, in the same build.
        let pageSize = environment["KEEPALIVE_BENCH_PAGE_SIZE"].flatMap { Int($0) }
        let binary = BenchAgent.binary
        let broker = try MosquittoBroker()
        // About 3.6 sentences per fix in this capture: one fix a second.
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.28)
        let udpPort = Ports.free()
        let directory = try TemporaryDirectory("bench-steady")
        let notify = try NotifySocket(directory: directory)
        let config = try directory.write("config.toml", """
            [device]
            id = "bench"
            timezone = "UTC"
            [mqtt]
            port = \(broker.port)
            [store]
            path = "\(directory.file("store.db"))"
            batch_ms = \(batchMs)
            fold_s = \(foldS)
            synchronous = "\(synchronous)"
            [gps]
            port = \(gps.port)
            [hr]
            transport = "udp"
            udp_port = \(udpPort)
            """)
        // The regime of a store past its first checkpoint — every hour but the first: the -wal
        // file as large as a checkpoint lets it grow, reused from its start, so the agent's frames
        // overwrite it in place. A fresh file's WAL grows instead, and each 4 KiB it grows by costs
        // the filesystem metadata too (KEEPALIVE_BENCH_FRESH_WAL=1 measures that, the first hour).
        // Made here with ~3 MB of filler committed, freed and checkpointed before the agent starts;
        // this connection stays open, or closing it would delete the -wal file.
        let freshWAL = environment["KEEPALIVE_BENCH_FRESH_WAL"] == "1"
        var walKeeper: SQLiteConnection?
        if pageSize != nil || !freshWAL {
            let file = try SQLiteConnection(path: directory.file("store.db"))
            try file.execute("PRAGMA page_size = \(pageSize ?? Store.pageSize)")
            try file.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try file.execute("PRAGMA journal_mode = WAL")
            if !freshWAL {
                try file.execute("CREATE TABLE bench_filler (x BLOB)")
                try file.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000) INSERT INTO bench_filler SELECT randomblob(400) FROM n")
                try file.execute("DROP TABLE bench_filler")
                try file.execute("PRAGMA incremental_vacuum")
                try file.execute("PRAGMA wal_checkpoint(PASSIVE)")
                walKeeper = file
            }
        }
        defer { _ = walKeeper }
        let consumer = try await MQTTSubscriber(port: broker.port, filter: "keepalive/#")
        let launched = Date()
        // Synchronised: the 2014 capture's fixes get system time, so replays are new fixes.
        // KEEPALIVE_BENCH_SLOW_CORE=1: on one core at a 25 % quota, a stand-in for a Pi 3 (`SlowCore`).
        let command = SlowCore.requested ? try SlowCore.wrap(binary, ["run", "--config", config]) : (binary, ["run", "--config", config])
        let agent = try ManagedProcess(
            name: "keepalive", executable: command.0, arguments: command.1,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1", "NOTIFY_SOCKET": notify.path])
        defer {
            agent.stop()
            if SlowCore.requested { SlowCore.remove() }
        }
        try await Wait.until(timeout: 30, "READY=1 from the agent") { notify.count("READY=1") > 0 }
        let ready = (notify.messages.first { $0.lines.contains("READY=1") }?.at ?? Date()).timeIntervalSince(launched)
        // One RR interval per notification, as a chest strap sends (KEEPALIVE_BENCH_RR=0: none).
        let withRR = environment["KEEPALIVE_BENCH_RR"] != "0"
        let sender = HeartRateSender(port: udpPort, hz: 1, sensor: "bench", rr: withRR)
        defer { sender.stop() }

        // Warm up (first fix, first publications), then measure a window.
        try await Task.sleep(for: .seconds(min(30, duration / 4)))
        // The WAL is copied into the file at the window's start and end from here, and those
        // bytes counted with the agent's: the window pays for every page it changed once, whether
        // or not the agent's own 2 MiB checkpoint fell inside it (at ~2.5 MiB of WAL an hour with
        // the journal, it mostly would not). Slightly pessimistic: over a longer stretch a page
        // changed again after this checkpoint would be copied once, not twice.
        let checkpointer = try SQLiteConnection(path: directory.file("store.db"))
        _ = try Self.checkpoint(checkpointer, mode: freshWAL ? "TRUNCATE" : "RESTART")
        let before = try ProcessSample(pid: agent.pid)
        let rowsBefore = try StoredBytes(path: directory.file("store.db"))
        let messagesBefore = consumer.messages.count
        try await Task.sleep(for: .seconds(duration))  // the steady state itself: time passing
        let after = try ProcessSample(pid: agent.pid)
        let checkpointed = try Self.checkpoint(checkpointer, mode: "RESTART")
        let rowsAfter = try StoredBytes(path: directory.file("store.db"))
        let published = consumer.messages.dropFirst(messagesBefore).reduce(0) { $0 + $1.topic.utf8.count + $1.payload.utf8.count }

        let window = after.time.timeIntervalSince(before.time)
        let cpuPercent = (after.cpuSeconds - before.cpuSeconds) / window * 100
        let written = Double(after.writeBytes - before.writeBytes + checkpointed)
        let stored = Double(rowsAfter.bytes - rowsBefore.bytes + published)
        let perHour = 3600 / window
        let filePageSize = try SQLiteConnection(path: directory.file("store.db"), readOnly: true).scalarInt("PRAGMA page_size") ?? 0
        // The physical floor for this durability: every commit window must reach the card, and the
        // kernel writes at least one 4 KiB page to do it.
        let floorPerHour = 3600 / (Double(max(batchMs, 1)) / 1000) * 4096
        table.add("steady state 1 Hz GPS + 1 Hz HR\(withRR ? " with RR" : "")\(SlowCore.requested ? ", \(SlowCore.label): CPU as % of a whole core; of the quota ×4" : ""), \(Int(window)) s, batch_ms \(batchMs), fold_s \(foldS), synchronous \(synchronous), \(filePageSize)-byte pages, \(freshWAL ? "a fresh -wal growing" : "the -wal reused in place"): CPU", cpuPercent, "% of a core",
                  baseline: "—", 0, higherIsBetter: false, target: "≤ 1 %")
        let floor = await BenchAgent.rssFloorKiB(timeZone: "UTC")
        table.add("steady state: peak RSS (VmHWM), all mappings\(BenchAgent.isStatic ? ", packaged (static) binary" : "")", Double(after.peakRSSKiB) / 1024, "MiB",
                  baseline: floor == nil ? "—" : "a program built the same way doing only Foundation + one time zone", Double(floor ?? 0) / 1024,
                  higherIsBetter: false, target: "≤ 15 MiB")
        table.add("steady state: private memory (RssAnon)", Double(after.anonymousRSSKiB) / 1024, "MiB", baseline: "—", 0, higherIsBetter: false,
                  target: "≤ 8 MiB")
        table.add("steady state: private dirty memory (smaps_rollup Private_Dirty: anonymous + written private mappings)",
                  Double(after.privateDirtyKiB) / 1024, "MiB", baseline: "—", 0, higherIsBetter: false, target: "≤ 8 MiB")
        table.add("steady state: bytes written to disk per hour (/proc/pid/io write_bytes, the window's WAL checkpointed and counted)", written * perHour / 1_048_576, "MiB/h",
                  baseline: "floor: one 4 KiB page per \(batchMs) ms commit", floorPerHour / 1_048_576, higherIsBetter: false,
                  target: "ratio ≤ 1.5×")
        table.add("steady state: of which the checkpoint at the window's end (copying the WAL's pages into the file)", Double(checkpointed) * perHour / 1_048_576, "MiB/h",
                  baseline: "—", 0, higherIsBetter: false)
        table.add("steady state: bytes written to disk per hour, against data", written * perHour / 1_048_576, "MiB/h",
                  baseline: "data stored (rows + published payloads) per hour", stored * perHour / 1_048_576, higherIsBetter: false)
        table.add("steady state: bytes written per commit window", written / (window * 1000 / Double(max(batchMs, 1))) / 1024, "KiB",
                  baseline: "one 4 KiB page", 4, higherIsBetter: false)
        table.add("start-up: launch to READY=1", ready * 1000, "ms", baseline: "—", 0, higherIsBetter: false)
        let stripped = try await strippedSize(binary, in: directory)
        let mosquitto = Double((try? FileManager.default.attributesOfItem(atPath: Tools.mosquitto)[.size] as? Int) ?? 0)
        table.add("stripped binary size (\(BenchAgent.isStatic ? "Swift runtime and Foundation linked in, as packaged" : "dynamic Swift runtime"))", Double(stripped) / 1_048_576, "MiB",
                  baseline: "/usr/sbin/mosquitto", mosquitto / 1_048_576, higherIsBetter: false)
    }

    /// Copies the WAL into the database file (waiting for the agent's commit under way); the
    /// bytes this process wrote doing it (/proc/self/io).
    static func checkpoint(_ connection: SQLiteConnection, mode: String) throws -> Int {
        let before = try ProcessSample(pid: getpid()).writeBytes
        try connection.execute("PRAGMA wal_checkpoint(\(mode))")
        return try ProcessSample(pid: getpid()).writeBytes - before
    }

    static func strippedSize(_ binary: String, in directory: TemporaryDirectory) async throws -> Int {
        let copy = directory.file("keepalive.stripped")
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: binary, toPath: copy)
        let strip = try ManagedProcess(name: "strip", executable: Tools.find("strip"), arguments: [copy])
        _ = await strip.waitForExit(timeout: 60)
        return (try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0
    }
}

/// CPU time, peak RSS and bytes written to storage of a process, from /proc.
struct ProcessSample {
    var time: Date
    var cpuSeconds: Double
    var peakRSSKiB: Int
    var anonymousRSSKiB: Int
    var privateDirtyKiB: Int
    var writeBytes: Int

    init(pid: pid_t) throws {
        time = Date()
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command (which may hold spaces) start after the last ')'.
        let fields = stat[stat.index(after: stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        cpuSeconds = ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kib(_ key: String) -> Int {
            Int(status.split(separator: "\n").first { $0.hasPrefix(key) }?.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        peakRSSKiB = kib("VmHWM:")
        anonymousRSSKiB = kib("RssAnon:")
        let rollup = (try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)) ?? ""
        privateDirtyKiB = Int(rollup.split(separator: "\n").first { $0.hasPrefix("Private_Dirty:") }?.split(separator: " ").dropFirst().first ?? "0") ?? 0
        let io = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        writeBytes = Int(io.split(separator: "\n").first { $0.hasPrefix("write_bytes:") }?.split(separator: " ").last ?? "0") ?? 0
    }
}

/// The bytes of data in the store's rows: each column's stored size (8 per number, the length
/// of text and blobs), what the agent was asked to keep, before SQLite's pages and indexes.
struct StoredBytes {
    var bytes: Int

    init(path: String) throws {
        let db = try SQLiteConnection(path: path, readOnly: true)
        let fixes = try db.scalarInt("SELECT coalesce(sum(13 * 8 + length(time_source)), 0) FROM fix") ?? 0
        let heartRates = try db.scalarInt("SELECT coalesce(sum(7 * 8 + length(sensor) + length(raw)), 0) FROM hr_sample") ?? 0
        let intervals = try db.scalarInt("SELECT count(*) * 4 * 8 FROM rr_interval") ?? 0
        bytes = Int(fixes + heartRates + intervals)
    }
}

/// The agent binary the benchmarks run: the one `deploy/package-deb.sh` installs (release, Swift
/// runtime linked in statically) when scripts/bench.sh built it, else the release build.
enum BenchAgent {
    static var binary: String {
        // KEEPALIVE_BENCH_AGENT: another build of the agent to measure.
        if let chosen = ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_AGENT"] { return chosen }
        let candidates = ["\(Tools.packageRoot)/.build-static/release/keepalive", "\(Tools.packageRoot)/.build/release/keepalive"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? Tools.agent
    }

    static var isStatic: Bool { binary.contains("/.build-static/") }

    /// Peak RSS (KiB) of `keepalive-rss-floor` built the same way (scripts/bench.sh: static, in
    /// Benchmarks/.build-static), if it was built.
    static func rssFloorKiB(timeZone: String) async -> Int? {
        let floor = "\(Tools.packageRoot)/Benchmarks/\(isStatic ? ".build-static" : ".build")/release/keepalive-rss-floor"
        guard FileManager.default.isExecutableFile(atPath: floor),
            let process = try? ManagedProcess(name: "rss-floor", executable: floor, arguments: [timeZone])
        else { return nil }
        _ = await process.waitForExit(timeout: 30)
        return Int(process.text.split(separator: " ").first ?? "")
    }
}
