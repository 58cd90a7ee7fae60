import Foundation
import Testing
import TestKit

@testable import Store

@Suite("Storage faults", .serialized)
struct StorageFaultTests {
    @Test("the store's disk fills up: the agent stays up, says so in status (sent live), and resumes storing once space is back")
    func diskFull() async throws {
        let disk = try await SmallDisk(megabytes: 4)
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.05)
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nstatus_interval_s = 1\n", store: disk.path + "/k.db",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        let fixCount = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM fix")) ?? nil }
        try await Wait.until(timeout: 20, "some fixes stored") { (fixCount() ?? 0) > 5 }

        try disk.fill()
        try await status.waitFor(timeout: 20, "a status naming the storage error") { Self.storeError($0) != nil }
        #expect(agent.process?.isRunning == true)
        // Still publishing while full.
        let whileFull = status.messages.count
        try await Wait.until(timeout: 10, "two more status messages while the disk is full") { status.messages.count >= whileFull + 2 }

        disk.free()
        let before = fixCount() ?? 0
        let freedAt = status.messages.count
        try await Wait.until(timeout: 20, "a status without the error once space is back") {
            status.messages.dropFirst(freedAt).contains { $0.json?["state"] as? String == "online" && Self.storeError($0) == nil }
        }
        try await Wait.until(timeout: 20, "storing to resume") { (fixCount() ?? 0) > before }
        #expect(agent.stop() == 0)
        let db = try SQLiteConnection(path: agent.storePath)
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
    }

    static func storeError(_ message: MQTTSubscriber.Message) -> String? {
        (message.json?["store"] as? [String: Any])?["error"] as? String
    }

    @Test("SIGKILL during ingest, ten times: the file always passes integrity_check and the outbox drains after each restart")
    func killDuringIngest() async throws {
        let broker = try MosquittoBroker()
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.02)
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
        let directory = try TemporaryDirectory("kill")
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nlocation_interval_s = 1\nstatus_interval_s = 1\n", directory: directory,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"], start: false)
        for round in 1...10 {
            try agent.start()
            let seen = watcher.messages.count
            try await Wait.until(timeout: 20, "round \(round): messages flowing") { watcher.messages.count >= seen + 2 }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...700)))  // a random moment, on purpose
            agent.kill9()
            let db = try SQLiteConnection(path: agent.storePath)
            #expect(try db.scalarText("PRAGMA integrity_check") == "ok", "round \(round)")
        }
        try agent.start()
        try await Wait.until(timeout: 30, "the outbox to drain after the last restart") {
            let pending = try SQLiteConnection(path: agent.storePath, readOnly: true)
                .scalarInt("SELECT count(*) FROM outbox WHERE rejected_reason IS NULL AND topic NOT LIKE '%/status'")
            return pending == 0
        }
        let seqs = watcher.messages.compactMap { $0.json?["seq"] as? Int }
        #expect(Set(seqs).count > 20)
    }
}
