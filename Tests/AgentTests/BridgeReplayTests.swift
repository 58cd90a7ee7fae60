import Foundation
import Testing
import TestKit

@testable import Store

/// Replays told by what the bridge sent, not by the time the agent gave it (docs/contract.md,
/// "Replays"). The bridge is a real child (`command` transport) that prints its lines and then
/// goes quiet, so the agent restarts it every second and it prints them all again: a child bridge
/// restarted by reacquisition that resends its lines, with stamps the agent does not believe
/// (1970: a bridge whose clock was never set, or none at all). One agent run, killed (SIGKILL)
/// midway and started again on the same store, then the bridge "rebooted": its `seq` begins again;
/// last, stopped and started as systemd does, with the bridge sending the same lines again.
/// Each test judges one claim on what that run stored.
@Suite("Bridge replays stored once", .serialized)
struct BridgeReplayTests {
    /// 20 heart-rate notifications of a clockless bridge: stamped 12 s after 1970 began, a second apart.
    static func clockless(bootOffsetMs: Int, raws: [String]) -> [String] {
        raws.enumerated().map { index, raw in
            let stamp = Date(timeIntervalSince1970: Double(bootOffsetMs + index * 1000) / 1000)
            return #"{"ts":"\#(Self.iso(stamp))","seq":\#(index + 1),"sensor":"clockless","raw":"\#(raw)"}"#
        }
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Real 0x2A37 values (the first 20 of the MIT-BIH fixture): their stamps are not used.
    static func fixtureRaws() throws -> [String] {
        try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n").prefix(20).map {
            let object = try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            return try #require(object["raw"] as? String)
        }
    }

    /// The bridge's lines other than the clockless strap's: the same in both of its sessions.
    static func otherLines() throws -> [String] {
        let raws = try fixtureRaws()
        // No stamp at all, but a seq.
        var lines = raws.enumerated().map { #"{"seq":\#($0.offset + 1),"sensor":"nostamp","raw":"\#($0.element)"}"# }
        // A foot pod (0x2A53, a real notification's value), clockless.
        lines += (0..<10).map { index in
            #"{"ts":"1970-01-01T00:00:\#(String(format: "%02d", 20 + index)).000Z","seq":\#(index + 1),"sensor":"pod","char":"2a53","raw":"070003aa6a0057300000"}"#
        }
        // 10 000 distinct notifications sharing one stamp value (distinct seq): none is a replay.
        lines += (0..<10_000).map { index in
            #"{"ts":"1970-01-01T00:00:00.000Z","seq":\#(index + 1),"sensor":"burst","raw":"\#(raws[index % raws.count])"}"#
        }
        // A strap's accelerometer, clockless: five one-second batches at 50 Hz.
        lines += (0..<5).map { batch in
            let samples = (0..<50).map { sample in
                let phase = Double(batch * 50 + sample) / 50 * 2 * Double.pi * 1.4
                return "[\(Int(40 * sin(phase))),\(Int(980 + 300 * sin(phase))),\(Int(20 * cos(phase)))]"
            }
            return #"{"ts":"1970-01-01T00:01:0\#(batch).000Z","seq":\#(batch + 1),"sensor":"h10","char":"pmd_acc","rate_hz":50,"samples":[\#(samples.joined(separator: ","))]}"#
        }
        return lines
    }

    struct Outcome: Sendable {
        /// Rows per sensor after the first agent's replays, after the restarted agent's, and after the bridge's new session.
        let firstRun, afterRestart, afterBridgeReboot: Result<[String: Int64], any Error>
        let accCoveredMs: Int64?
        let accCoveredAfterGracefulRestartMs: Int64?
        let duplicatesReported: Int?
        let log: String
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        defer { status.stop() }
        let directory = try TemporaryDirectory("hr-replay")
        let raws = try fixtureRaws()
        let others = try otherLines()
        let lines = directory.file("lines.ndjson")
        // The bridge's lines end with a marker notification named by the start's pid and by the
        // file's version (its value): once a marker is stored, everything that start printed
        // before it has been taken, and the marker says which file that start read — a start
        // that read the old file can be stored after the file changed, on a loaded machine.
        let write = { (bootOffsetMs: Int, version: String) in
            let marker = #"{"sensor":"marker","seq":@PID@,"raw":"\#(version)"}"#
            try (clockless(bootOffsetMs: bootOffsetMs, raws: raws) + others + [marker]).joined(separator: "\n").appending("\n")
                .write(toFile: lines, atomically: true, encoding: .utf8)
        }
        let (firstVersion, rebootVersion) = ("0648", "0649")
        try write(12_000, firstVersion)
        let script = #"sed "s/@PID@/$$/" \#(lines); exec sleep 1000"#
        let config = "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"\(script.replacingOccurrences(of: "\"", with: "\\\""))\"]\nstall_timeout_s = 1\nreacquire_max_s = 1\n[schedule]\nstatus_interval_s = 1\n"
        let counts = { () -> [String: Int64] in
            guard let db = try? SQLiteConnection(path: directory.file("keepalive.db"), readOnly: true) else { return [:] }
            var result: [String: Int64] = [:]
            for (name, table) in [("clockless", "hr_sample"), ("nostamp", "hr_sample"), ("burst", "hr_sample"), ("marker", "hr_sample"), ("pod", "step_record")] {
                guard let statement = try? db.statement(sql: "SELECT count(*) FROM \(table) WHERE sensor = ?").bind(.text(name)) else { continue }
                defer { statement.reset() }
                if (try? statement.step()) == true { result[name] = statement.int64(0) }
            }
            return result
        }
        /// Markers stored from starts that read the file of `version`.
        let markers = { (version: String) -> Int64 in
            guard let db = try? SQLiteConnection(path: directory.file("keepalive.db"), readOnly: true),
                let statement = try? db.statement(sql: "SELECT count(*) FROM hr_sample WHERE sensor = 'marker' AND hex(raw) = ?")
                    .bind(.text(version.uppercased()))
            else { return 0 }
            defer { statement.reset() }
            return (try? statement.step()) == true ? statement.int64(0) : 0
        }
        /// Waits until `count` bridge starts that read the file of `version` have been taken whole.
        func replayed(_ count: Int64, of version: String, _ agent: AgentProcess) async -> Result<[String: Int64], any Error> {
            await captured {
                try await Wait.until(timeout: 60, "\(count) bridge starts of file \(version) stored whole; rows \(counts()); log:\n\(agent.log.suffix(1500))") {
                    markers(version) >= count
                }
                return counts()
            }
        }

        var agent = try AgentProcess(brokerPort: broker.port, extraConfig: config, directory: directory)
        let firstRun = await replayed(3, of: firstVersion, agent)
        // Killed with windows in its ingest journal; the next start folds them and takes the bridge's lines again.
        agent.kill9()
        let markersBefore = markers(firstVersion)
        agent = try AgentProcess(brokerPort: broker.port, extraConfig: config, directory: directory)
        let afterRestart = await replayed(markersBefore + 2, of: firstVersion, agent)
        // The bridge reboots: its seq begins again at 1 with the same values, its clockless stamps
        // from its new uptime (5 s): new notifications, every one kept.
        try write(5_000, rebootVersion)
        let afterBridgeReboot = await replayed(2, of: rebootVersion, agent)
        // This agent's bridge started at least four times, each start's 10 050 lines copies but for
        // the reboot's 20: status (every second) counts them as duplicate.
        let duplicated = { (message: MQTTSubscriber.Message) -> Int in
            ((message.json?["hr"] as? [String: Any])?["dropped"] as? [String: Any])?["duplicate"] as? Int ?? 0
        }
        let duplicates = try? await status.waitFor(timeout: 15, "a status counting the copies") { duplicated($0) >= 3 * 10_030 }
        // Stopped as systemd stops it: its open step windows are stored with their batches' origins.
        agent.stop()
        let accCovered = {
            let db = try SQLiteConnection(path: directory.file("keepalive.db"), readOnly: true)
            return try db.scalarInt("SELECT coalesce(sum(covered_ms), 0) FROM step_record WHERE sensor = 'h10' AND kind = 'acc'")
        }
        let covered = try accCovered()
        // Started again, the bridge sending the same batches twice more: remembered from the store.
        let markersStopped = markers(rebootVersion)
        agent = try AgentProcess(brokerPort: broker.port, extraConfig: config, directory: directory)
        _ = await replayed(markersStopped + 2, of: rebootVersion, agent)
        agent.stop()
        return Outcome(
            firstRun: firstRun, afterRestart: afterRestart, afterBridgeReboot: afterBridgeReboot, accCoveredMs: covered,
            accCoveredAfterGracefulRestartMs: try accCovered(), duplicatesReported: duplicates.map(duplicated),
            log: agent.log)
    }

    @Test("a clockless bridge's notifications, sent again by each restart of its child, are stored once")
    func clocklessStoredOnce() async throws {
        let outcome = try await Self.outcome.value
        #expect(try outcome.firstRun.get()["clockless"] == 20)
        #expect(try outcome.firstRun.get()["nostamp"] == 20, "a bridge without stamps: named by seq and value")
        #expect(try outcome.firstRun.get()["pod"] == 10, "RSC notifications (0x2A53) the same way")
        #expect(outcome.duplicatesReported != nil, "status counts the copies as duplicate")
    }

    @Test("10 000 distinct notifications sharing one untrusted stamp are all stored")
    func sharedStampAllStored() async throws {
        #expect(try await Self.outcome.value.firstRun.get()["burst"] == 10_000)
    }

    @Test("a replay spanning an agent killed with rows in its ingest journal is still stored once")
    func acrossRestart() async throws {
        let counts = try await Self.outcome.value.afterRestart.get()
        #expect(counts["clockless"] == 20 && counts["nostamp"] == 20 && counts["pod"] == 10 && counts["burst"] == 10_000, "\(counts)")
    }

    @Test("a bridge that reboots and begins its seq again is not taken for a replay")
    func rebootedBridgeIsNew() async throws {
        let counts = try await Self.outcome.value.afterBridgeReboot.get()
        #expect(counts["clockless"] == 40, "the new session's 20 notifications (same seq and values, new stamps) kept: \(counts)")
        #expect(counts["nostamp"] == 20 && counts["pod"] == 10 && counts["burst"] == 10_000, "\(counts)")
    }

    @Test("accelerometer batches sent again are not counted again")
    func accelerometerCountedOnce() async throws {
        let outcome = try await Self.outcome.value
        let covered = try #require(outcome.accCoveredMs)
        // Five one-second batches: counted once per agent run at most (a window still open at a
        // SIGKILL was never stored, so its batches' replay is counted again), never per bridge start.
        #expect(covered > 0 && covered <= 2 * 5_000 + 100, "covered \(covered) ms")
    }

    @Test("accelerometer batches sent again after the agent stopped and started are not counted again")
    func accelerometerAcrossGracefulRestart() async throws {
        let outcome = try await Self.outcome.value
        // The windows stored at the stop carry their batches' origins; the next agent reads them back.
        #expect(outcome.accCoveredAfterGracefulRestartMs == outcome.accCoveredMs, "covered before \(outcome.accCoveredMs ?? -1) ms, after \(outcome.accCoveredAfterGracefulRestartMs ?? -1) ms")
    }
}
