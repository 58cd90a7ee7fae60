import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

@Suite("Storage faults", .serialized)
struct StorageFaultTests {
    @Test("the store's disk fills up: the agent stays up, says so in status (sent live), and resumes storing once space is back")
    func diskFull() async throws {
        let rig = try await DiskFullRig()
        let (disk, status, agent) = (rig.disk, rig.status, rig.agent)
        let fixCount = { (try? SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM fix")) ?? nil }
        try await Wait.until(timeout: 20, "some fixes stored") { (fixCount() ?? 0) > 5 }

        try disk.fill()
        try await status.waitFor(timeout: 20, "a status naming the storage error") { DiskFullRig.storeError($0) != nil }
        #expect(agent.process?.isRunning == true)
        // Still publishing while full.
        let whileFull = status.messages.count
        try await Wait.until(timeout: 10, "two more status messages while the disk is full") { status.messages.count >= whileFull + 2 }

        disk.free()
        let before = fixCount() ?? 0
        let freedAt = status.messages.count
        try await Wait.until(timeout: 20, "a status without the error once space is back") {
            status.messages.dropFirst(freedAt).contains { $0.json?["state"] as? String == "online" && DiskFullRig.storeError($0) == nil }
        }
        try await Wait.until(timeout: 20, "storing to resume") { (fixCount() ?? 0) > before }
        #expect(agent.stop() == 0)
        let db = try SQLiteConnection(path: agent.storePath)
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
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
        // What the last kill left queued (status is "latest wins" and may be superseded).
        let queuedIDs = { () throws -> Set<Int64> in
            let statement = try SQLiteConnection(path: agent.storePath, readOnly: true)
                .statement("SELECT id FROM outbox WHERE rejected_reason IS NULL AND delivered = 0 AND topic NOT LIKE '%/status'")
            var ids = Set<Int64>()
            while try statement.step() { ids.insert(statement.int64(0)) }
            return ids
        }
        let leftByKill = try queuedIDs()
        let seenBeforeRestart = watcher.messages.count
        try agent.start()
        // Drained: every message the kill left is delivered and gone from the file. (Messages of
        // this run leave with the ingest journal's next fold once acknowledged, so with a
        // location a second the outbox is rarely empty at any one instant.)
        try await Wait.until(timeout: 30, "the outbox left by the last kill to drain after the restart (\(leftByKill.count) messages)") {
            try queuedIDs().isDisjoint(with: leftByKill)
        }
        try await Wait.until(timeout: 20, "a location published after the last restart") {
            watcher.messages.dropFirst(seenBeforeRestart).contains { $0.topic.hasSuffix("/location") }
        }
        let seqs = watcher.messages.compactMap { $0.json?["seq"] as? Int }
        #expect(Set(seqs).count > 20)
    }
}

@Suite("Retention")
struct RetentionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: Int64 = 86_400_000
    static var nowMs: Int64 { now.unixMs }

    /// 10 days of one fix and one notification a minute, the oldest 10 days ago, and a day aggregate,
    /// pruned to 5 days.
    static func prunedToFiveDays(in directory: TemporaryDirectory) async throws -> Store {
        let store = try Store(Store.Configuration(path: directory.file("k.db"), synchronous: .normal))
        let (now, day, nowMs) = (Self.now, Self.day, Self.nowMs)
        // 10 days of one fix + one notification a minute, the oldest 10 days ago.
        for dayIndex in 0..<10 {
            let start = nowMs - Int64(10 - dayIndex) * day
            try await store.write(
                fixes: (0..<1440).map { StoredFix(timeMs: start + Int64($0) * 60_000, receivedMs: start, lat: 1, lon: 2, mode: 3, timeSource: "gps") },
                heartRates: (0..<1440).map {
                    StoredHeartRate(sensor: "s", timeMs: start + Int64($0) * 60_000, receivedMs: start, bpm: 60, contact: 2, valid: true,
                                    raw: Array(repeating: 0x16, count: 64))
                })
        }
        try await store.saveDayAggregate(
            StoredDayAggregate(date: "2027-01-01", tz: "UTC", payload: "{}", final: true, updatedMs: 0),
            builtUpTo: try await store.readStored { try $0.rowCursor() }, dayMs: (0, 0))

        let keepFive = RetentionService(store: store, retentionDays: 5, maxBytes: 0, clock: AgentClock(), logger: .init(label: "test"))
        try await keepFive.pruneOnce(now: now)
        return store
    }

    @Test("old raw rows go, aggregates stay")
    func retention() async throws {
        let directory = try TemporaryDirectory("retention")
        let store = try await Self.prunedToFiveDays(in: directory)
        let oldest = try #require(try await store.oldestRawTimeMs())
        #expect(oldest >= Self.nowMs - 5 * Self.day)
        #expect(try await store.readStored { try $0.dayAggregate(date: "2027-01-01") } != nil)
    }

    @Test("over max_bytes the oldest rows go first and the file gives space back")
    func retentionAndCap() async throws {
        let directory = try TemporaryDirectory("retention")
        let store = try await Self.prunedToFiveDays(in: directory)
        let now = Self.now
        let oldest = try #require(try await store.oldestRawTimeMs())
        let sizeBefore = try await store.space()
        let cap = Int(sizeBefore.usedBytes / 2)
        let capped = RetentionService(store: store, retentionDays: 365, maxBytes: cap, clock: AgentClock(), logger: .init(label: "test"))
        try await capped.pruneOnce(now: now)
        let after = try await store.space()
        #expect(after.usedBytes <= Int64(cap))
        #expect(after.fileBytes < sizeBefore.fileBytes, "incremental vacuum should shrink the file")
        #expect(try await store.oldestRawTimeMs() ?? 0 > oldest, "the oldest rows go first")
        #expect(try await store.integrityCheck() == "ok")
    }
}
