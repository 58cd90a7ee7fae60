import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// A bridge delivering a backlog as fast as it can, through each transport that can push back:
/// nothing may be lost. Figures: time, stored count, and the agent's peak memory (VmHWM).
@Suite("Fault: a bridge backlog through every transport", .enabled(if: FaultSuite.enabled, FaultSuite.reason), .serialized)
struct BacklogFaults {
    /// A broker (holding a real backlog, as deploy/mosquitto/keepalive-bridge.conf configures
    /// it), a status subscriber, and a backlog of `count` notifications; the agent is started by
    /// each test with its transport.
    struct Rig {
        let broker: MosquittoBroker
        let watcher: MQTTSubscriber
        let directory: TemporaryDirectory
        let backlog: BridgeBacklog

        init(_ label: String, count: Int) async throws {
            broker = try MosquittoBroker(extraConfig: "max_queued_messages 100000\n")
            watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
            directory = try TemporaryDirectory(label)
            backlog = try BridgeBacklog(in: directory, count: count)
        }

        func agent(_ transport: String, store: String? = nil) throws -> AgentProcess {
            try AgentProcess(
                brokerPort: broker.port, extraConfig: transport + "[schedule]\nstatus_interval_s = 1\ntoday_interval_s = 1\n",
                store: store, directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        }

        /// The newest online status.
        var status: [String: Any]? { watcher.messages.last { $0.json?["state"] as? String == "online" }?.json }

        /// Waits until all are stored; the seconds since `started`.
        func waitUntilStored(_ agent: AgentProcess, since started: Date, timeout: Double) async throws -> Double {
            try await Wait.until(timeout: timeout, "\(backlog.count) stored (\(BacklogFaults.stored(agent.storePath)))") {
                BacklogFaults.stored(agent.storePath) == backlog.count
            }
            return Date().timeIntervalSince(started)
        }

        /// After the backlog: the day's valid samples as a user asks for them, and no drops but
        /// replays; stops the agent. Returns its peak memory, MiB.
        func expectWhole(_ agent: AgentProcess) async throws -> Double {
            let figures = try await whole(agent)
            Self.expectWhole(figures)
            return figures.peakMiB
        }

        /// What `expectWhole` judges, read and the agent stopped, for a claim to judge later.
        struct Whole: Sendable {
            let day: String
            let count: Int
            let validSamples: Int?
            let dropped: [String: Int]?
            let exitStatus: Int32?
            let peakMiB: Double
        }

        func whole(_ agent: AgentProcess) async throws -> Whole {
            let peak = BacklogFaults.peakMiB(agent.process!.pid)
            let valid = try await agent.validSamples(on: backlog.day, expected: backlog.count)
            try await Wait.until(timeout: 10, "a status with the drop counts") { dropped != nil }
            return Whole(day: backlog.day, count: backlog.count, validSamples: valid, dropped: dropped, exitStatus: agent.stop(), peakMiB: peak)
        }

        static func expectWhole(_ whole: Whole) {
            #expect(whole.validSamples == whole.count, "valid_samples of \(whole.day)")
            for (reason, count) in whole.dropped ?? [:] where reason != "duplicate" {
                #expect(count == 0, "hr.dropped.\(reason)")
            }
            #expect(whole.exitStatus == 0)
        }

        private var dropped: [String: Int]? { (status?["hr"] as? [String: Any])?["dropped"] as? [String: Int] }

        /// mosquitto_pub sending every line at QoS 1 as fast as the broker acknowledges.
        func publish() throws -> ManagedProcess {
            try ManagedProcess(
                name: "mosquitto_pub -l", executable: "/bin/sh",
                arguments: ["-c", "\(Tools.mosquittoPub) -h 127.0.0.1 -p \(broker.port) -q 1 -V 5 -t hrbridge/v1/backlog/measurement -l < \(backlog.path)"])
        }
    }

    static func stored(_ path: String) -> Int {
        Int(((try? SQLiteConnection(path: path, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil) ?? 0)
    }

    /// The process's peak resident memory so far, MiB.
    static func peakMiB(_ pid: pid_t) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return Double(line?.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }

    static let mqttBridge = "[hr]\ntransport = \"mqtt\"\nstall_timeout_s = 1000\n"

    @Test("100 000 notifications from a command bridge in one cat: all stored within 50 s, valid_samples 100 000")
    func command() async throws {
        let rig = try await Rig("backlog-command", count: 100_000)
        let started = Date()
        let agent = try rig.agent(rig.backlog.commandBridge)
        let seconds = try await rig.waitUntilStored(agent, since: started, timeout: 50)
        let peak = try await rig.expectWhole(agent)
        FaultSuite.report(
            "backlog: command bridge, 100 000 notifications in one cat",
            "all 100 000 stored in \(FaultSuite.format(seconds)) s from launch (debug build), valid_samples 100 000, 0 dropped; agent VmHWM \(FaultSuite.format(peak)) MiB")
    }

    @Test("100 000 notifications written to a serial tty as fast as it takes them: all stored")
    func serial() async throws {
        let rig = try await Rig("backlog-serial", count: 100_000)
        let bridge = try ManagedProcess(
            name: "pty_stream", executable: Tools.find("python3"), arguments: [Tools.fixture("tools/pty_stream.py"), rig.backlog.path])
        defer { bridge.stop() }
        let tty = try await bridge.waitForLine(containing: "/dev/pts/")
        let agent = try rig.agent("[hr]\ntransport = \"serial\"\nserial_device = \"\(tty)\"\nstall_timeout_s = 1000\n")
        try await agent.process!.waitForLine(containing: "serial bridge open")
        let started = Date()
        kill(bridge.pid, SIGUSR1)
        let seconds = try await rig.waitUntilStored(agent, since: started, timeout: 120)
        let peak = try await rig.expectWhole(agent)
        FaultSuite.report(
            "backlog: serial bridge (pty), 100 000 notifications as fast as the tty takes them",
            "all 100 000 stored in \(FaultSuite.format(seconds)) s, valid_samples 100 000, 0 dropped; agent VmHWM \(FaultSuite.format(peak)) MiB")
    }

    @Test("50 000 QoS 1 messages published as fast as possible to the mqtt bridge topic: all stored")
    func mqtt() async throws {
        let rig = try await Rig("backlog-mqtt", count: 50_000)
        let agent = try rig.agent(Self.mqttBridge)
        // Subscribed once status says so (the SUBSCRIBE goes out on connect, before the first status).
        _ = try await rig.watcher.waitFor(timeout: 20, "the agent online") { $0.json?["state"] as? String == "online" }
        let started = Date()
        let publisher = try rig.publish()
        #expect(await publisher.waitForExit(timeout: 120) == 0, "mosquitto_pub: \(publisher.text.suffix(500))")
        let published = Date().timeIntervalSince(started)
        let seconds = try await rig.waitUntilStored(agent, since: started, timeout: 120)
        let peak = try await rig.expectWhole(agent)
        FaultSuite.report(
            "backlog: mqtt bridge, 50 000 QoS 1 messages published as fast as possible",
            "all 50 000 stored in \(FaultSuite.format(seconds)) s (the broker had them all after \(FaultSuite.format(published)) s: it held the rest meanwhile), valid_samples 50 000, 0 dropped; agent VmHWM \(FaultSuite.format(peak)) MiB")
    }

    /// 50 000 QoS 1 messages while the store's disk is full, then space back: once, for the three
    /// claims below. The agent and the broker are stopped before the outcome is handed out.
    struct WhileStoreFails: Sendable {
        let publisherExit: Int32?
        let publisherText: String
        let pendingReported: Result<Void, any Error>
        let held: Int
        let storedWhileFull: Int
        let drained: Result<Double, any Error>
        let whole: Result<Rig.Whole, any Error>
    }

    static let whileStoreFails = Task { () async throws -> WhileStoreFails in
        let disk = try await SmallDisk(megabytes: 64)
        let rig = try await Rig("backlog-mqtt-full", count: 50_000)
        defer { rig.broker.stop() }
        let agent = try rig.agent(Self.mqttBridge, store: disk.path + "/k.db")
        _ = try await rig.watcher.waitFor(timeout: 20, "the agent online") { $0.json?["state"] as? String == "online" }
        try disk.fill()
        _ = try await rig.watcher.waitFor(timeout: 20, "status naming the storage error") { DiskFullRig.storeError($0) != nil }
        let publisher = try rig.publish()
        // The broker has acknowledged every message to the publisher: it holds what the agent does not.
        let publisherExit = await publisher.waitForExit(timeout: 300)
        // The agent takes what it may hold, and says how much in status.
        let pending = { ((rig.status?["store"] as? [String: Any])?["pending_samples"] as? Int) ?? 0 }
        let pendingReported = await captured {
            try await Wait.until(timeout: 20, "status reporting the samples held in memory (\(pending()))") { pending() >= 20_000 }
        }
        try await Task.sleep(for: .seconds(2))
        let held = pending()
        let peakWhileFull = Self.peakMiB(agent.process!.pid)
        let storedWhileFull = Self.stored(agent.storePath)
        disk.free()
        let drained = await captured { try await rig.waitUntilStored(agent, since: Date(), timeout: 180) }
        let whole = await captured { try await rig.whole(agent) }
        FaultSuite.report(
            "backlog: mqtt bridge, 50 000 QoS 1 messages while the store's disk is full",
            "broker acknowledged all 50 000 to the publisher while the agent held \(held) in memory (VmHWM \(FaultSuite.format(peakWhileFull)) MiB), so the broker held at least \(50_000 - held - 4 * TransportThread.defaultCapacity) (the rest, less the agent's queue); all 50 000 stored \(FaultSuite.format((try? drained.get()) ?? -1)) s after space came back, 0 dropped; VmHWM \(FaultSuite.format((try? whole.get())?.peakMiB ?? -1)) MiB")
        return WhileStoreFails(
            publisherExit: publisherExit, publisherText: String(publisher.text.suffix(500)), pendingReported: pendingReported, held: held,
            storedWhileFull: storedWhileFull, drained: drained, whole: whole)
    }

    @Test("50 000 QoS 1 messages while the store's disk is full: the agent holds a bounded number")
    func mqttWhileStoreFails() async throws {
        let outcome = try await Self.whileStoreFails.value
        try outcome.pendingReported.get()
        #expect(outcome.held <= 20_000 + TransportThread.defaultCapacity, "bounded: \(outcome.held)")
        #expect(outcome.storedWhileFull == 0, "nothing can be stored yet")
    }

    @Test("50 000 QoS 1 messages while the store's disk is full: the broker holds the rest, having acknowledged every one")
    func mqttWhileStoreFailsBrokerHolds() async throws {
        let outcome = try await Self.whileStoreFails.value
        #expect(outcome.publisherExit == 0, "mosquitto_pub: \(outcome.publisherText)")
    }

    @Test("50 000 QoS 1 messages held while the store's disk was full: all stored once space is back")
    func mqttWhileStoreFailsAllStored() async throws {
        let outcome = try await Self.whileStoreFails.value
        _ = try outcome.drained.get()
        Rig.expectWhole(try outcome.whole.get())
    }
}
