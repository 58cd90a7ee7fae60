import Agent
import Bus
import CSQLite
import Foundation
import GRDB
import Logging
import Store
import TestKit

/// `scripts/bench.sh [ingest|e2e|dayread|outbox|query|steady|backlogquery]…` (`ingest` includes `e2e`)
///
/// Every figure is printed next to a baseline measured in the same run on the same machine:
/// a raw prepared-insert loop for ingest, `mosquitto_pub -q 1` for the outbox drain.
@main
struct BenchMain {
    static func main() async throws {
        let selected = Set(CommandLine.arguments.dropFirst())
        let all = selected.isEmpty
        var table = BenchTable()
        if all || selected.contains("ingest") { try await IngestBench.run(into: &table) }
        if all || selected.contains("ingest") || selected.contains("e2e") { try await IngestEndToEndBench.run(into: &table) }
        if all || selected.contains("dayread") { try await DayReadBench.run(into: &table) }
        if all || selected.contains("outbox") { try await OutboxBench.run(into: &table) }
        if all || selected.contains("query") { try await QueryBench.run(into: &table) }
        if all || selected.contains("steady") { try await SteadyStateBench.run(into: &table) }
        if all || selected.contains("backlogquery") { try await BacklogQueryBench.run(into: &table) }
        table.print()
    }
}

/// One table of results: the figure, its baseline, and the ratio.
struct BenchTable {
    struct Row {
        var name: String
        var value: Double
        var unit: String
        var baselineName: String
        var baseline: Double
        var higherIsBetter: Bool
        var target: String
    }

    var rows: [Row] = []

    mutating func add(
        _ name: String, _ value: Double, _ unit: String, baseline baselineName: String, _ baseline: Double, higherIsBetter: Bool,
        target: String = ""
    ) {
        rows.append(Row(
            name: name, value: value, unit: unit, baselineName: baselineName, baseline: baseline, higherIsBetter: higherIsBetter,
            target: target))
    }

    func print() {
        Swift.print("\n| measure | value | baseline | baseline value | ratio | target |")
        Swift.print("|---|---|---|---|---|---|")
        for row in rows {
            let hasBaseline = row.baseline > 0
            let ratio = hasBaseline ? String(format: "%.2f×", row.value / row.baseline) : "—"
            let baseline = hasBaseline ? "\(Self.format(row.baseline)) \(row.unit)" : "—"
            Swift.print("| \(row.name) | \(Self.format(row.value)) \(row.unit) | \(row.baselineName) | \(baseline) | \(ratio) | \(row.target) |")
        }
        var machine = utsname()
        uname(&machine)
        let arch = withUnsafeBytes(of: &machine.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        Swift.print("\nmachine: \(arch), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_048_576) MiB")
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.3g", value)
    }
}

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now()
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

func benchFix(_ index: Int, base: Int64 = 1_700_000_000_000) -> StoredFix {
    StoredFix(
        timeMs: base + Int64(index) * 1000, receivedMs: base + Int64(index) * 1000 + 40, lat: 52.5 + Double(index % 1000) * 1e-5,
        lon: 13.4 + Double(index % 777) * 1e-5, altHAE: 80, altMSL: 40, speed: 1.2, track: 90, climb: 0, eph: 5, epv: 8, mode: 3,
        satellites: 9, timeSource: "gps")
}

func benchHeartRate(_ index: Int, base: Int64 = 1_700_000_000_000) -> StoredHeartRate {
    StoredHeartRate(
        sensor: "strap", timeMs: base + Int64(index) * 1000, receivedMs: base + Int64(index) * 1000, bpm: 60 + index % 40,
        contact: 2, valid: true, raw: [0x16, UInt8(60 + index % 40), 0x11, 0x04], rrIntervals: [1041])
}

/// Ingest through the store's batch path vs a raw prepared-insert loop with the same pragmas.
enum IngestBench {
    static let rows = 200_000
    static let batch = 10  // 1 s of 1 Hz GPS + 1 Hz HR ≈ a few rows; 10 is generous

    static func run(into table: inout BenchTable) async throws {
        let directory = try TemporaryDirectory("bench-ingest")
        let store = try Store(path: directory.file("store.db"))
        let fixes = (0..<rows).map { benchFix($0) }
        let storeTime = try await seconds {
            for start in stride(from: 0, to: rows, by: batch) {
                try await store.write(fixes: Array(fixes[start..<min(start + batch, rows)]))
            }
        }
        let rawTime = try rawInsertLoop(path: directory.file("raw.db"), fixes: fixes)
        let grdbTime = try grdbInsertLoop(path: directory.file("grdb.db"), fixes: fixes)
        table.add("ingest: fixes/s, store batch path (\(batch)/commit, synchronous=FULL)", Double(rows) / storeTime, "rows/s",
                  baseline: "raw prepared insert, same batches", Double(rows) / rawTime, higherIsBetter: true, target: "≥ 0.5×")
        let heartRates = (0..<rows).map { benchHeartRate($0) }
        let storeHeartRateTime = try await seconds {
            for start in stride(from: 0, to: rows, by: batch) {
                try await store.write(heartRates: Array(heartRates[start..<min(start + batch, rows)]))
            }
        }
        let rawHeartRateTime = try rawHeartRateLoop(path: directory.file("raw-hr.db"), samples: heartRates)
        table.add("ingest: HR notifications/s (+ RR rows), store batch path", Double(rows) / storeHeartRateTime, "rows/s",
                  baseline: "raw prepared inserts, same batches", Double(rows) / rawHeartRateTime, higherIsBetter: true, target: "≥ 0.5×")
        table.add("ingest: fixes/s, GRDB 7 cached statement, same batches", Double(rows) / grdbTime, "rows/s",
                  baseline: "raw prepared insert, same batches", Double(rows) / rawTime, higherIsBetter: true)
    }

    /// The same inserts through GRDB (DatabasePool: WAL), to decide between it and the C API.
    static func grdbInsertLoop(path: String, fixes: [StoredFix]) throws -> Double {
        _ = try Store(path: path)  // the store's own layout, as for the raw loops
        let pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in
            // GRDB sets NORMAL for WAL when it opens the writer; the store's default is FULL.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let start = DispatchTime.now()
        for batchStart in stride(from: 0, to: fixes.count, by: batch) {
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "INSERT OR IGNORE INTO fix VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                for fix in fixes[batchStart..<min(batchStart + batch, fixes.count)] {
                    try statement.execute(arguments: [
                        fix.timeMs, fix.receivedMs, fix.lat, fix.lon, fix.altHAE, fix.altMSL, fix.speed, fix.track, fix.climb,
                        fix.eph, fix.epv, fix.mode, fix.satellites, fix.timeSource,
                    ])
                }
            }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// Notifications and their RR intervals with two prepared statements, as the store does.
    static func rawHeartRateLoop(path: String, samples: [StoredHeartRate]) throws -> Double {
        let db = try openRaw(path)
        defer { sqlite3_close(db) }
        var sample: OpaquePointer?
        var interval: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO hr_sample (sensor, ts_ms, received_ms, bpm, contact, energy_kj, valid, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1, &sample, nil)
        sqlite3_prepare_v2(db, "INSERT INTO rr_interval (sample_id, position, ts_ms, rr_1024) VALUES (?, ?, ?, ?)", -1, &interval, nil)
        defer {
            sqlite3_finalize(sample)
            sqlite3_finalize(interval)
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let start = DispatchTime.now()
        for (index, heartRate) in samples.enumerated() {
            if index % batch == 0 { sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) }
            sqlite3_bind_text(sample, 1, heartRate.sensor, -1, transient)
            sqlite3_bind_int64(sample, 2, heartRate.timeMs)
            sqlite3_bind_int64(sample, 3, heartRate.receivedMs)
            sqlite3_bind_int64(sample, 4, Int64(heartRate.bpm))
            sqlite3_bind_int64(sample, 5, Int64(heartRate.contact))
            sqlite3_bind_null(sample, 6)
            sqlite3_bind_int64(sample, 7, heartRate.valid ? 1 : 0)
            heartRate.raw.withUnsafeBytes { _ = sqlite3_bind_blob(sample, 8, $0.baseAddress, Int32($0.count), transient) }
            sqlite3_step(sample)
            sqlite3_reset(sample)
            let id = sqlite3_last_insert_rowid(db)
            for (position, rr) in heartRate.rrIntervals.enumerated() {
                sqlite3_bind_int64(interval, 1, id)
                sqlite3_bind_int64(interval, 2, Int64(position))
                sqlite3_bind_int64(interval, 3, heartRate.timeMs)
                sqlite3_bind_int64(interval, 4, Int64(rr))
                sqlite3_step(interval)
                sqlite3_reset(interval)
            }
            if index % batch == batch - 1 || index == samples.count - 1 { sqlite3_exec(db, "COMMIT", nil, nil, nil) }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// A bare sqlite3 connection to a file laid out exactly as the store lays it out (the store
    /// creates it: same tables, indexes and file settings), with the store's connection pragmas.
    static func openRaw(_ path: String) throws -> OpaquePointer? {
        _ = try Store(path: path)
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        sqlite3_exec(db, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", nil, nil, nil)
        return db
    }

    static func rawInsertLoop(path: String, fixes: [StoredFix]) throws -> Double {
        let db = try openRaw(path)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO fix VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let start = DispatchTime.now()
        for (index, fix) in fixes.enumerated() {
            if index % batch == 0 { sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) }
            sqlite3_bind_int64(statement, 1, fix.timeMs)
            sqlite3_bind_int64(statement, 2, fix.receivedMs)
            sqlite3_bind_double(statement, 3, fix.lat)
            sqlite3_bind_double(statement, 4, fix.lon)
            for (offset, value) in [fix.altHAE, fix.altMSL, fix.speed, fix.track, fix.climb, fix.eph, fix.epv].enumerated() {
                sqlite3_bind_double(statement, Int32(5 + offset), value ?? 0)
            }
            sqlite3_bind_int64(statement, 12, Int64(fix.mode))
            sqlite3_bind_int64(statement, 13, Int64(fix.satellites ?? 0))
            sqlite3_bind_text(statement, 14, fix.timeSource, -1, transient)
            sqlite3_step(statement)
            sqlite3_reset(statement)
            if index % batch == batch - 1 || index == fixes.count - 1 { sqlite3_exec(db, "COMMIT", nil, nil, nil) }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}

/// The store of `KEEPALIVE_BENCH_DAYS` (365) days of 1 Hz fixes + 1 Hz heart rate from
/// 2026-01-01 UTC, generated once and cached outside the repository.
enum BenchStore {
    static let base: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    static func ensure() async throws -> (path: String, base: Int64, days: Int) {
        let days = Int(ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_DAYS"] ?? "365") ?? 365
        let cache = (ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? NSHomeDirectory() + "/.cache") + "/keepalive-bench"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let path = "\(cache)/store-\(days)d.db"
        if !FileManager.default.fileExists(atPath: path + ".complete") {
            try? FileManager.default.removeItem(atPath: path)
            let store = try Store(Store.Configuration(path: path, synchronous: .normal))
            let perDay = 86_400
            let generation = try await seconds {
                for day in 0..<days {
                    for chunk in stride(from: 0, to: perDay, by: 3600) {
                        let indices = (day * perDay + chunk)..<(day * perDay + chunk + 3600)
                        try await store.write(fixes: indices.map { benchFix($0, base: base) }, heartRates: indices.map { benchHeartRate($0, base: base) })
                    }
                }
            }
            _ = FileManager.default.createFile(atPath: path + ".complete", contents: nil)
            Swift.print("generated \(days) days in \(String(format: "%.0f", generation)) s: \(path)")
        }
        return (path, base, days)
    }
}

/// Reading one local day from a store holding `days` days of 1 Hz fixes + 1 Hz heart rate.
enum DayReadBench {
    static func run(into table: inout BenchTable) async throws {
        let (path, base, days) = try await BenchStore.ensure()
        let store = try Store(path: path)
        let utc = TimeZone(identifier: "UTC")!
        let day = LocalDay(containing: Date(timeIntervalSince1970: Double(base) / 1000 + Double(days / 2) * 86_400), timeZone: utc)
        let (from, to) = day.boundsMs
        var rows = 0
        let read = try await seconds {
            rows = try await store.read { try $0.fixes(fromMs: from, toMs: to).count } + store.read { try $0.heartRates(fromMs: from, toMs: to).count }
        }
        // Baseline: the same rows read back from a store holding that one day only.
        let directory = try TemporaryDirectory("bench-oneday")
        let small = try Store(Store.Configuration(path: directory.file("one.db"), synchronous: .normal))
        let firstIndex = Int((from - base) / 1000)
        for chunk in stride(from: firstIndex, to: firstIndex + 86_400, by: 3600) {
            try await small.write(fixes: (chunk..<chunk + 3600).map { benchFix($0, base: base) },
                                  heartRates: (chunk..<chunk + 3600).map { benchHeartRate($0, base: base) })
        }
        let readSmall = try await seconds {
            _ = try await small.read { try $0.fixes(fromMs: from, toMs: to).count } + small.read { try $0.heartRates(fromMs: from, toMs: to).count }
        }
        table.add("day read: \(rows) rows of one day from \(days) days of 1 Hz GPS+HR", read * 1000, "ms",
                  baseline: "same day from a 1-day store", readSmall * 1000, higherIsBetter: false)

        // The store's decoding against the bare C API on the same file: what the wrapper (columns
        // found by name, statement caches) costs per row. Best of three, after one warm-up read.
        var notifications = 0
        var storeHeartRates = Double.infinity
        var rawHeartRates = Double.infinity
        _ = try await store.read { try $0.heartRates(fromMs: from, toMs: to) }
        _ = try rawHeartRateDay(path: path, fromMs: from, toMs: to)
        for _ in 0..<3 {
            storeHeartRates = min(storeHeartRates, try await seconds {
                notifications = try await store.read { try $0.heartRates(fromMs: from, toMs: to).count }
            })
            rawHeartRates = min(rawHeartRates, try await seconds { _ = try rawHeartRateDay(path: path, fromMs: from, toMs: to) })
        }
        table.add("day read: \(notifications) HR notifications (with RR) of one day, Store.heartRates", storeHeartRates * 1000, "ms",
                  baseline: "same SELECT through the C API, decoded by position", rawHeartRates * 1000, higherIsBetter: false)
    }

    /// A day's notifications read as the store reads them, through sqlite3_* directly.
    static func rawHeartRateDay(path: String, fromMs: Int64, toMs: Int64) throws -> [StoredHeartRate] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw BenchError.open(path) }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, """
            SELECT s.sensor, s.ts_ms, s.received_ms, s.bpm, s.contact, s.energy_kj, s.valid, s.raw,
                   (SELECT group_concat(rr_1024) FROM (SELECT rr_1024 FROM rr_interval r WHERE r.sample_id = s.id
                                                       ORDER BY position)), s.id
            FROM hr_sample s WHERE s.ts_ms >= ? AND s.ts_ms < ? AND s.id <= ? ORDER BY s.ts_ms, s.sensor
            """, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, fromMs)
        sqlite3_bind_int64(statement, 2, toMs)
        sqlite3_bind_int64(statement, 3, .max)
        var samples: [StoredHeartRate] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let rr = sqlite3_column_text(statement, 8).map { String(cString: $0) }?.split(separator: ",").compactMap { Int($0) } ?? []
            let rawCount = Int(sqlite3_column_bytes(statement, 7))
            let raw = sqlite3_column_blob(statement, 7).map { Array(UnsafeRawBufferPointer(start: $0, count: rawCount)) } ?? []
            samples.append(StoredHeartRate(
                sensor: sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "", timeMs: sqlite3_column_int64(statement, 1),
                receivedMs: sqlite3_column_int64(statement, 2), bpm: Int(sqlite3_column_int64(statement, 3)),
                contact: Int(sqlite3_column_int64(statement, 4)),
                energyKJ: sqlite3_column_type(statement, 5) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(statement, 5)),
                valid: sqlite3_column_int64(statement, 6) != 0, raw: raw, rrIntervals: rr))
        }
        return samples
    }
}

enum BenchError: Error {
    case open(String)
}

/// Draining a 10 000-message outbox through the agent's drain vs mosquitto_pub -q 1 sending the same.
enum OutboxBench {
    static let count = 10_000

    static func run(into table: inout BenchTable) async throws {
        let broker = try MosquittoBroker()
        let payload = String(repeating: "x", count: 180)
        let directory = try TemporaryDirectory("bench-outbox")
        let store = try Store(path: directory.file("store.db"))
        for start in stride(from: 0, to: count, by: 500) {
            try await store.write(messages: (start..<min(start + 500, count)).map { index in
                OutboxDraft(topic: "bench/outbox", retain: false) { seq in Array("{\"seq\":\(seq),\"p\":\"\(payload)\"}".utf8) }
            })
        }
        let client = MQTTClient(options: MQTTClientOptions(host: "127.0.0.1", port: broker.port, clientID: "bench-drain"), logger: Logger(label: "bench"))
        let drain = OutboxDrain(store: store, client: client, maxInflight: 20, useProperties: true, logger: Logger(label: "bench"))
        client.start()
        let drainTime = try await seconds {
            for await event in client.events {
                switch event {
                case .connected(let session, let receiveMaximum): await drain.connected(session: session, receiveMaximum: receiveMaximum)
                case .published(let session, let mid, let code):
                    await drain.published(session: session, mid: mid, reasonCode: code)
                    if await drain.inflightCount == 0 {
                        await drain.flushAcknowledgements()
                        if try await store.outboxSummary().pending == 0 { return }
                    }
                default: break
                }
            }
        }
        client.stop()

        let lines = (0..<count).map { "{\"seq\":\($0),\"p\":\"\(payload)\"}" }.joined(separator: "\n") + "\n"
        let input = try directory.write("lines.txt", lines)
        let pubTime = try await seconds {
            let process = try ManagedProcess(
                name: "mosquitto_pub", executable: "/bin/sh",
                arguments: ["-c", "\(Tools.mosquittoPub) -h 127.0.0.1 -p \(broker.port) -q 1 -V 5 -t bench/pub -l < \(input)"])
            _ = await process.waitForExit(timeout: 300)
        }
        table.add("outbox drain: \(count) messages, QoS 1, 20 in flight", Double(count) / drainTime, "msg/s",
                  baseline: "mosquitto_pub -q 1 -l, same messages", Double(count) / pubTime, higherIsBetter: true)
    }
}
