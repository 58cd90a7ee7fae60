import Foundation
import Testing
import TestKit

@testable import Store

/// The store's failure modes against real files: a full disk (locations keep going out live and
/// are queued once without duplicates), the file deleted or replaced under the running agent,
/// and bit rot in stored JSON.
@Suite("Store failure modes", .serialized)
struct StoreFailureTests {
    /// Slot locations (OwnTracks trigger "t") as (seq, created_at), in arrival order.
    static func slots(_ messages: [MQTTSubscriber.Message]) -> [(seq: Int, createdAt: Int)] {
        messages.compactMap { message in
            guard let json = message.json, json["t"] as? String == "t", let seq = json["seq"] as? Int,
                let created = json["created_at"] as? Int
            else { return nil }
            return (seq, created)
        }
    }

    @Test("disk full with the broker up: every location slot still goes out live, once, and none is queued again afterwards")
    func liveSlotsWhileFull() async throws {
        let disk = try await SmallDisk(megabytes: 4)
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.05)
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nlocation_interval_s = 1\nstatus_interval_s = 1\n", store: disk.path + "/k.db",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        _ = try await watcher.waitFor(count: 3, timeout: 30, "three slots before the disk fills") { $0.topic.hasSuffix("/location") }

        try disk.fill()
        try await watcher.waitFor(timeout: 20, "a status naming the storage error") { DiskFullRig.storeError($0) != nil }
        try await agent.process!.waitForLine(containing: "sending them live", timeout: 20)
        let fullAt = Self.slots(watcher.messages.filter { $0.topic.hasSuffix("/location") }).count
        try await Wait.until(timeout: 20, "four slots while the disk is full") {
            Self.slots(watcher.messages.filter { $0.topic.hasSuffix("/location") }).count >= fullAt + 4
        }
        disk.free()
        try await watcher.waitFor(timeout: 20, "a status without the error") {
            $0.topic.hasSuffix("/status") && $0.json?["state"] as? String == "online" && DiskFullRig.storeError($0) == nil
                && (($0.json?["outbox"] as? [String: Any])?["held"] as? Int) == 0
        }
        let freedAt = Self.slots(watcher.messages.filter { $0.topic.hasSuffix("/location") }).count
        try await Wait.until(timeout: 20, "three slots after space came back") {
            Self.slots(watcher.messages.filter { $0.topic.hasSuffix("/location") }).count >= freedAt + 3
        }
        // Delivered before the stop was asked for: their PUBACKs are in, so the stop leaves none
        // of them queued. (One published as the agent stops may be, undelivered or unacknowledged:
        // at-least-once, it goes again at the next start.)
        let deliveredBeforeStop = Self.slots(watcher.messages.filter { $0.topic == "keepalive/testpi/location" }).map(\.seq)
        #expect(agent.stop() == 0)

        let slots = Self.slots(watcher.messages.filter { $0.topic == "keepalive/testpi/location" })
        // Once each: a seq is never seen twice (the live copy was acknowledged, so it was not queued).
        #expect(Set(slots.map(\.seq)).count == slots.count, "seqs: \(slots.map(\.seq))")
        // Every slot, before, during and after, in order: one second apart, seq going up.
        let times = slots.map(\.createdAt)
        #expect(OutageRig.gaps(in: times, interval: 1).isEmpty, "slots: \(times)")
        #expect(zip(slots, slots.dropFirst()).allSatisfy { $0.seq < $1.seq })
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let queued = try db.statement("SELECT seq FROM outbox WHERE topic = 'keepalive/testpi/location' AND delivered = 0")
        var queuedSeqs: [Int] = []
        while try queued.step() { queuedSeqs.append(queued.int(0)) }
        #expect(Set(queuedSeqs).isDisjoint(with: deliveredBeforeStop), "delivered and still queued: \(queuedSeqs)")
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
    }

    @Test("disk full and the broker away: slots are held with their seq, queued once space is back, delivered once when the broker is")
    func heldSlotsQueuedLater() async throws {
        let disk = try await SmallDisk(megabytes: 4)
        let broker = try MosquittoBroker(persistence: true)
        let consumer = try await MQTTSubscriber(
            port: broker.port, filter: "keepalive/testpi/location", clientID: "held-\(UInt16.random(in: 0...9999))", persistent: true)
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.05)
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nlocation_interval_s = 1\nstatus_interval_s = 1\n", store: disk.path + "/k.db",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        _ = try await consumer.waitFor(count: 3, timeout: 30, "three slots first") { _ in true }
        broker.stop()
        try await agent.process!.waitForLine(containing: "MQTT connection lost", timeout: 10)
        try disk.fill()
        try await agent.process!.waitForLines(containingAny: ["sending them live"], count: 3, timeout: 20)
        disk.free()
        try await agent.process!.waitForLine(containing: "queued the messages held", timeout: 20)
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let queued = try db.scalarInt("SELECT count(*) FROM outbox WHERE topic = 'keepalive/testpi/location' AND delivered = 0") ?? 0
        #expect(queued >= 3, "the held slots are in the outbox now")
        try broker.start()
        let last = Int(Date().timeIntervalSince1970)
        try await Wait.until(timeout: 30, "the slots up to now delivered") {
            (Self.slots(consumer.messages).map(\.createdAt).max() ?? 0) >= last + 2
        }
        #expect(agent.stop() == 0)
        // A consumer dedupes by seq; then every slot is there once, in order, with one seq.
        var seen = Set<Int>()
        let slots = Self.slots(consumer.messages).filter { seen.insert($0.seq).inserted }
        let times = slots.map(\.createdAt)
        #expect(Set(times).count == times.count, "no slot under two seqs: \(slots)")
        #expect(OutageRig.gaps(in: times.sorted(), interval: 1).isEmpty, "slots: \(times)")
        #expect(zip(slots, slots.dropFirst()).allSatisfy { $0.seq < $1.seq }, "in order: \(slots)")
    }

    /// The agent with heart rate at 10 Hz over UDP and status every second, for the tests that
    /// pull the file from under it.
    struct Running {
        let broker: MosquittoBroker
        let watcher: MQTTSubscriber
        let sender: HeartRateSender
        let agent: AgentProcess

        init() async throws {
            broker = try MosquittoBroker()
            watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
            let port = Ports.free()
            agent = try AgentProcess(
                brokerPort: broker.port,
                extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\nstall_timeout_s = 1000\n[schedule]\nstatus_interval_s = 1\n",
                environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
            try await watcher.waitFor(timeout: 20, "hr ready") { ($0.json?["hr"] as? [String: Any])?["state"] as? String == "stalled" }
            sender = HeartRateSender(port: port, hz: 10, sensor: "watch")
            let path = agent.storePath
            try await Wait.until(timeout: 20, "samples stored") {
                ((try? SQLiteConnection(path: path, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil ?? 0) > 20
            }
        }

        /// Samples keep coming for a while, then everything sent from the first stored one until
        /// the bridge stopped must be in the file now at the path.
        func expectNothingLost(after event: MQTTSubscriber.Message) async throws {
            try await Task.sleep(for: .seconds(2))  // samples keep arriving into the new file
            sender.stop()
            try await Task.sleep(for: .milliseconds(500))
            #expect(agent.stop() == 0)
            let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
            #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
            let statement = try db.statement("SELECT ts_ms FROM hr_sample WHERE sensor = 'watch' ORDER BY ts_ms")
            var stored: [Int64] = []
            while try statement.step() { stored.append(statement.int64(0)) }
            let first = try #require(stored.first)
            let sent = sender.sentTimes(from: first, to: .max)
            let missing = Set(sent).subtracting(stored)
            #expect(missing.isEmpty, "\(missing.count) of \(sent.count) samples sent are not in the new file")
            let carried = (event.json?["carried_over"] as? [String: Any])?["heart_rates"] as? Int ?? 0
            #expect(carried > 20, "the rows before the deletion were carried over: \(carried)")
            // The seq counter never went back: the new file's is past every seq published.
            let seqs = watcher.messages.compactMap { $0.json?["seq"] as? Int }
            #expect(try db.scalarInt("SELECT value FROM agent_state WHERE key = 'seq'") ?? 0 >= Int64(seqs.max() ?? 0))
        }
    }

    @Test("the store file deleted under the running agent (rm): noticed within seconds, status and event/storage say so, nothing is lost")
    func fileDeleted() async throws {
        let running = try await Running()
        let deletedAt = Date()
        #expect(unlink(running.agent.storePath) == 0)  // only the main file, as `rm keepalive.db` does
        let event = try await running.watcher.waitFor(timeout: 10, "event/storage") { $0.topic.hasSuffix("/event/storage") }
        // On the agent's own stamp: it noticed at its next check (every 2 s), not when the event arrived here.
        let noticed = running.agent.log.split(separator: "\n").first { $0.contains("the store file was deleted while the agent ran") }
            .flatMap { $0.split(separator: " ").first }.flatMap { QueryFreshnessTests.parseTimestamp(String($0)) }
        #expect(noticed.map { $0.timeIntervalSince(deletedAt) < 10 } == true, "noticed within seconds: \(String(describing: noticed))")
        #expect((event.json?["problem"] as? String)?.contains("deleted") == true)
        try await running.watcher.waitFor(timeout: 10, "status counting the reopen") {
            (($0.json?["store"] as? [String: Any])?["reopened"] as? Int) == 1
        }
        #expect(running.watcher.messages.contains { (($0.json?["store"] as? [String: Any])?["error"] as? String)?.contains("deleted") == true })
        try await running.expectNothingLost(after: event)
    }

    @Test("the store file replaced under the running agent by something that is not a database: moved aside, a new one used, nothing lost")
    func fileReplaced() async throws {
        let running = try await Running()
        let stranger = running.agent.directory.file("stranger")
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: stranger))
        #expect(rename(stranger, running.agent.storePath) == 0)
        let event = try await running.watcher.waitFor(timeout: 10, "event/storage") { $0.topic.hasSuffix("/event/storage") }
        #expect((event.json?["problem"] as? String)?.contains("replaced") == true)
        let keptAs = try #require(event.json?["kept_as"] as? String)
        #expect(FileManager.default.contents(atPath: keptAs) == Data(repeating: 0x42, count: 8192), "the stranger is kept as it was")
        try await running.expectNothingLost(after: event)
    }

    @Test("bit rot in a stored day aggregate: the reply is valid JSON, recomputed from the rows, over MQTT and on the command line")
    func bitRotNotSpliced() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/daily/#")
        let directory = try TemporaryDirectory("bitrot")
        let backlog = try BridgeBacklog(in: directory, count: 200)
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: backlog.commandBridge + "[schedule]\ntoday_interval_s = 1\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await watcher.waitFor(timeout: 30, "the day's final aggregate with all 200 samples") {
            $0.topic.hasSuffix("/\(backlog.day)")
                && (($0.json?["heart_rate"] as? [String: Any])?["valid_samples"] as? Int) == 200
        }
        #expect(agent.stop() == 0)
        // Rot: the stored JSON cut short and garbled, as a failing card returns it.
        let db = try SQLiteConnection(path: agent.storePath)
        try db.statement("UPDATE day_aggregate SET payload = ? WHERE date = ?")
            .bind(.text(#"{"date":"\#(backlog.day)","heart_rate":{"samples":2\#u{1}\#u{7f}"#), .text(backlog.day)).run()
        try db.statement("UPDATE day_aggregate SET first_fix = ?, last_fix = ? WHERE date = ?")
            .bind(.text("{\"tst\":"), .text("]"), .text(backlog.day)).run()

        let reply = try #require(try await agent.queryReply([backlog.day]), "the command line reply is JSON")
        #expect(reply["ok"] as? Bool == true)
        #expect(BridgeBacklog.validSamples(reply) == 200)

        try agent.start()
        try await agent.process!.waitForLine(containing: "MQTT connected")
        var answer = ""
        for _ in 0..<5 where answer.isEmpty {  // the agent's SUBSCRIBE may not be through yet
            answer = (try? await MQTTTools.request(port: broker.port, topic: "keepalive/testpi/selection/date", message: backlog.day)) ?? ""
        }
        let overMQTT = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], "valid JSON: \(answer)")
        #expect(BridgeBacklog.validSamples(overMQTT) == 200)
        #expect(agent.log.contains("not valid JSON"), "the rot is logged")
        #expect(agent.stop() == 0)
    }
}
