import Foundation
import Testing
import TestKit

@testable import Store

@Suite("Fault: SIGKILL during ingest", .enabled(if: FaultSuite.enabled, FaultSuite.reason))
struct KillFaults {
    static let batchMs = 1000
    /// How late a sample may reach the writer after it was sent (UDP, parsing, the actor hop).
    static let slackMs: Int64 = 500

    @Test("50 SIGKILLs at random moments during 10 Hz HR + 1 Hz GPS: integrity_check ok 50/50, the outbox drains after each restart, samples lost ≤ the batch window")
    func fiftyKills() async throws {
        // 10 notifications and a fix a window fit a 4 KiB journal slot: the ring takes these too.
        try await killRounds(rounds: 50, hz: 10, label: "SIGKILL × 50 during 10 Hz HR + 1 Hz GPS")
    }

    @Test("12 SIGKILLs 2–40 s into 1 Hz HR + 1 Hz GPS with the default 60 s fold: every window committed to the ingest journal is there (folded at the next start), integrity ok, lost ≤ the batch window")
    func killsWithTheJournal() async throws {
        // Up to 40 s in: up to 40 windows wait in the ring at the kill.
        try await killRounds(
            rounds: 12, hz: 1, runningMs: 2000...40_000, label: "SIGKILL × 12, 2–40 s into 1 Hz HR + 1 Hz GPS, ingest journal (fold_s 60)")
    }

    func killRounds(rounds: Int, hz: Int, runningMs: ClosedRange<Int> = 300...2500, label: String) async throws {
        let broker = try MosquittoBroker()
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: hz == 1 ? 0.28 : 0.1)
        let udpPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: """
                [hr]
                transport = "udp"
                udp_port = \(udpPort)
                [schedule]
                location_interval_s = 1
                status_interval_s = 1
                """,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"], foldS: 60, start: false)
        try agent.addToConfig(section: "store", lines: ["batch_ms = \(Self.batchMs)"])
        let sender = HeartRateSender(port: udpPort, hz: Double(hz), rr: hz == 1)
        defer { sender.stop() }

        var integrityOK = 0
        var lostPerKill: [Int] = []
        var drainTimes: [Double] = []
        var pendingAtKill: [Int64] = []
        var journaledAtKill: [Int] = []
        for round in 1...rounds {
            try agent.start()
            let started = Date()
            if !pendingAtKill.isEmpty {
                let waiting = pendingAtKill
                try await Wait.until(timeout: 30, "round \(round): the outbox left by the last kill drained") {
                    ((try? Self.outboxIDs(agent.storePath)) ?? waiting).allSatisfy { !waiting.contains($0) }
                }
                drainTimes.append(Date().timeIntervalSince(started))
            }
            // Samples flow: one sent after this start is stored.
            let since = Date().unixMs
            var firstStored: Int64 = 0
            try await Wait.until(timeout: 30, "round \(round): heart rate stored") {
                // The file may not exist yet in the first round.
                firstStored = ((try? Self.sampleTimes(agent.storePath, from: since, to: .max).min()) ?? nil) ?? 0
                return firstStored > 0
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: runningMs)))  // a random moment, on purpose
            let killedAt = Date().unixMs
            agent.kill9()

            let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
            let check = try db.scalarText("PRAGMA integrity_check")
            #expect(check == "ok", "round \(round): \(check ?? "no answer")")
            if check == "ok" { integrityOK += 1 }
            pendingAtKill = try Self.outboxIDs(agent.storePath)

            // Every sample sent while the agent ran, up to one batch window before the kill, is
            // stored: in the tables, or in the journal's unfolded windows (the next start folds them).
            let stored = try Self.sampleTimes(agent.storePath, from: firstStored, to: killedAt)
            journaledAtKill.append(try Self.journaledSampleTimes(agent.storePath).count)
            let sent = sender.sentTimes(from: firstStored, to: killedAt)
            let lost = sent.filter { !stored.contains($0) }
            lostPerKill.append(lost.count)
            let tooOld = lost.filter { $0 < killedAt - Int64(Self.batchMs) - Self.slackMs }
            #expect(tooOld.isEmpty, "round \(round): lost samples older than the batch window: \(tooOld.map { killedAt - $0 }) ms before the kill")
        }
        try agent.start()
        // Signal handlers are in place once the services run; a SIGTERM before that ends it hard.
        try await agent.process!.waitForLine(containing: "Starting service sl-service=BridgeService")
        let waiting = pendingAtKill
        try await Wait.until(timeout: 30, "the outbox left by the last kill drained") {
            try Self.outboxIDs(agent.storePath).allSatisfy { !waiting.contains($0) }
        }
        #expect(agent.stop() == 0)
        // A clean stop folds: nothing is left in the journal, every journaled sample is in the tables.
        #expect(try Self.journaledSampleTimes(agent.storePath).isEmpty)
        if hz == 1 { #expect(journaledAtKill.contains { $0 > 0 }, "the journal was in use at the kills: \(journaledAtKill)") }
        FaultSuite.report(
            label,
            "integrity_check ok \(integrityOK)/\(rounds); lost per kill: max \(lostPerKill.max() ?? 0), mean \(FaultSuite.format(Double(lostPerKill.reduce(0, +)) / Double(max(lostPerKill.count, 1)))) samples (batch window \(Self.batchMs) ms = \(Self.batchMs * hz / 1000) samples at \(hz) Hz); unfolded in the journal at the kill: max \(journaledAtKill.max() ?? 0) notifications; outbox drained after restart in max \(FaultSuite.format(drainTimes.max() ?? 0)) s")
    }

    static func outboxIDs(_ path: String) throws -> [Int64] {
        let db = try SQLiteConnection(path: path, readOnly: true)  // outlives its statement
        let statement = try db.statement("SELECT id FROM outbox WHERE rejected_reason IS NULL AND delivered = 0")
        var ids: [Int64] = []
        while try statement.step() { ids.append(statement.int64(0)) }
        return ids
    }

    /// The fault sensor's notification times in `[from, to]`, in the tables or the journal.
    static func sampleTimes(_ path: String, from: Int64, to: Int64) throws -> Set<Int64> {
        let db = try SQLiteConnection(path: path, readOnly: true)
        let statement = try db.statement("SELECT ts_ms FROM hr_sample WHERE sensor = 'fault' AND ts_ms >= ? AND ts_ms <= ?")
            .bind(.integer(from), .integer(to))
        var times = try journaledSampleTimes(path).filter { from <= $0 && $0 <= to }
        while try statement.step() { times.insert(statement.int64(0)) }
        return times
    }

    /// The fault sensor's notifications in the journal's windows not yet folded, read as the
    /// next start reads them (Store+Journal.swift).
    static func journaledSampleTimes(_ path: String) throws -> Set<Int64> {
        var times = Set<Int64>()
        for entry in try Store.unfoldedJournalEntries(storePath: path) {
            for sample in entry.rows[HeartRateKind.self] where sample.sensor == "fault" { times.insert(sample.timeMs) }
        }
        return times
    }
}
