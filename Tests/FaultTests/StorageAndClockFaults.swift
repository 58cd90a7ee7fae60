import Foundation
import Testing
import TestKit

@testable import Store

@Suite("Fault: disk and clock", .enabled(if: FaultSuite.enabled, FaultSuite.reason))
struct StorageAndClockFaults {

    @Test("the store's disk fills up and frees again, 5 times: the agent stays up, keeps publishing live, resumes storing, the file stays intact")
    func diskFullCycles() async throws {
        let rig = try await DiskFullRig()
        let (disk, status, agent) = (rig.disk, rig.status, rig.agent)
        let fixCount = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM fix")) ?? nil }
        try await Wait.until(timeout: 20, "some fixes stored") { (fixCount() ?? 0) > 5 }
        var liveWhileFull: [Int] = []
        var resumeTimes: [Double] = []
        for round in 1...5 {
            try disk.fill()
            let filledAt = status.messages.count
            try await Wait.until(timeout: 20, "round \(round): a status naming the storage error") {
                status.messages.dropFirst(filledAt).contains { DiskFullRig.storeError($0) != nil }
            }
            // Status keeps going out (live, QoS 0) while nothing can be stored.
            let errorAt = status.messages.count
            try await Wait.until(timeout: 10, "round \(round): three more status messages while full") { status.messages.count >= errorAt + 3 }
            liveWhileFull.append(status.messages.dropFirst(filledAt).filter { DiskFullRig.storeError($0) != nil }.count)
            #expect(agent.process?.isRunning == true)

            disk.free()
            let freed = Date()
            let before = fixCount() ?? 0
            try await Wait.until(timeout: 30, "round \(round): storing resumed") { (fixCount() ?? 0) > before }
            resumeTimes.append(Date().timeIntervalSince(freed))
        }
        #expect(agent.stop() == 0)
        let check = try SQLiteConnection(path: agent.storePath).scalarText("PRAGMA integrity_check")
        #expect(check == "ok")
        FaultSuite.report(
            "disk full (4 MiB tmpfs) and freed × 5",
            "agent up throughout; ≥ \(liveWhileFull.min() ?? 0) live status messages per full spell; storing resumed \(FaultSuite.format(resumeTimes.max() ?? 0)) s (max) after space came back; integrity_check \(check ?? "?")")
    }

    @Test("the system clock unsynchronised and 12 years off at start: fixes stamped with GPS time, status says so, local days cut on GPS time")
    func clockFarOff() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
        let capture = Tools.fixture("gpsd/bu353s4.log")
        let offset = -12.0 * 365 * 86_400
        let gps = try await GPSFake(capture: capture, cycle: 0.3, once: true, linger: 1)
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30, extraConfig: "[schedule]\ntoday_interval_s = 1\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "0", "KEEPALIVE_FAULT_CLOCK_OFFSET_S": "\(offset)"])
        _ = await gps.process.waitForExit(timeout: 60)

        let expected = try GPSDExpected.positions(chk: capture + ".chk").compactMap(\.timeMs)
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let statement = try db.statement("SELECT ts_ms, time_source FROM fix ORDER BY ts_ms")
        var stored: [(Int64, String)] = []
        while try statement.step() { stored.append((statement.int64(0), statement.text(1))) }
        #expect(stored.count >= 5)
        #expect(stored.allSatisfy { expected.contains($0.0) && $0.1 == "gps" }, "every fix carries gpsd's time")
        let clock = try await watcher.waitFor("status with the GPS clock") {
            (($0.json?["clock"] as? [String: Any])?["source"] as? String) == "gps"
        }
        let skew = ((clock.json?["clock"] as? [String: Any])?["skew_s"] as? Double) ?? 0
        let gpsDay = LocalDay(containing: Date(unixMs: stored.last?.0 ?? 0), timeZone: TimeZone(identifier: "UTC")!)
        let today = try await watcher.waitFor("health/today on the GPS day") {
            $0.topic.hasSuffix("/health/today") && $0.json?["date"] as? String == gpsDay.description
        }
        #expect(today.json?["final"] as? Bool == false)
        FaultSuite.report(
            "clock unsynchronised, 12 years off",
            "\(stored.count)/\(stored.count) fixes stamped with GPS time; status clock source gps, skew \(FaultSuite.format(skew / 86_400 / 365.25)) years; health/today dated \(gpsDay) (GPS day)")
        #expect(agent.stop() == 0)
    }
}
