import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// A bridge delivering a backlog as fast as it can, through each transport that can push back:
/// nothing may be lost. Figures: time, stored count, and the agent's peak memory (VmHWM).
@Suite("Fault: a bridge backlog through every transport", .enabled(if: FaultSuite.enabled, FaultSuite.reason), .serialized)
struct BacklogFaults {
    static func stored(_ path: String) -> Int {
        Int(((try? SQLiteConnection(path: path, readOnly: true).scalarInt("SELECT count(*) FROM hr_sample")) ?? nil) ?? 0)
    }

    /// The process's peak resident memory so far, MiB.
    static func peakMiB(_ pid: pid_t) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return Double(line?.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }

    static func dropped(_ watcher: MQTTSubscriber) -> [String: Int] {
        let status = watcher.messages.last { $0.topic.hasSuffix("/status") && $0.json?["state"] as? String == "online" }
        return ((status?.json?["hr"] as? [String: Any])?["dropped"] as? [String: Int]) ?? [:]
    }

    /// After the backlog: the day's valid samples as a user asks for them, and no drops but replays.
    static func expectWhole(_ agent: AgentProcess, _ backlog: BridgeBacklog, _ watcher: MQTTSubscriber) async throws {
        var validSamples: Int?
        for _ in 0..<30 where validSamples != backlog.count {
            let reply = try await agent.queryReply([backlog.day])
            validSamples = ((reply?["health"] as? [String: Any])?["heart_rate"] as? [String: Any])?["valid_samples"] as? Int
            if validSamples != backlog.count { try await Task.sleep(for: .seconds(1)) }
        }
        #expect(validSamples == backlog.count, "valid_samples of \(backlog.day)")
        try await Wait.until(timeout: 10, "a status with the drop counts") { !dropped(watcher).isEmpty }
        for (reason, count) in dropped(watcher) where reason != "duplicate" {
            #expect(count == 0, "hr.dropped.\(reason)")
        }
    }

    static let config = "[schedule]\nstatus_interval_s = 1\ntoday_interval_s = 1\n"

    @Test("100 000 notifications from a command bridge in one cat: all stored within 50 s, valid_samples 100 000")
    func command() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("backlog-command")
        let backlog = try BridgeBacklog(in: directory, count: 100_000)
        let started = Date()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"cat \(backlog.path); exec sleep 1000\"]\nstall_timeout_s = 1000\n" + Self.config,
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await Wait.until(timeout: 50, "100 000 stored within 50 s (\(Self.stored(agent.storePath)))") { Self.stored(agent.storePath) == 100_000 }
        let seconds = Date().timeIntervalSince(started)
        let peak = Self.peakMiB(agent.process!.pid)
        try await Self.expectWhole(agent, backlog, watcher)
        #expect(agent.stop() == 0)
        FaultSuite.report(
            "backlog: command bridge, 100 000 notifications in one cat",
            "all 100 000 stored in \(FaultSuite.format(seconds)) s from launch (debug build), valid_samples 100 000, 0 dropped; agent VmHWM \(FaultSuite.format(peak)) MiB")
    }

    @Test("100 000 notifications written to a serial tty as fast as it takes them: all stored")
    func serial() async throws {
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("backlog-serial")
        let backlog = try BridgeBacklog(in: directory, count: 100_000)
        let bridge = try ManagedProcess(
            name: "pty_stream", executable: Tools.find("python3"), arguments: [Tools.fixture("tools/pty_stream.py"), backlog.path])
        let tty = try await bridge.waitForLine(containing: "/dev/pts/")
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"serial\"\nserial_device = \"\(tty)\"\nstall_timeout_s = 1000\n" + Self.config,
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        try await agent.process!.waitForLine(containing: "serial bridge open")
        let started = Date()
        kill(bridge.pid, SIGUSR1)
        try await Wait.until(timeout: 120, "100 000 stored from the tty (\(Self.stored(agent.storePath))); bridge: \(bridge.text.suffix(200))") {
            Self.stored(agent.storePath) == 100_000
        }
        let seconds = Date().timeIntervalSince(started)
        let peak = Self.peakMiB(agent.process!.pid)
        try await Self.expectWhole(agent, backlog, watcher)
        #expect(agent.stop() == 0)
        bridge.stop()
        FaultSuite.report(
            "backlog: serial bridge (pty), 100 000 notifications as fast as the tty takes them",
            "all 100 000 stored in \(FaultSuite.format(seconds)) s, valid_samples 100 000, 0 dropped; agent VmHWM \(FaultSuite.format(peak)) MiB")
    }

    /// mosquitto_pub sending every line of the backlog at QoS 1 as fast as the broker acknowledges.
    static func publish(_ backlog: BridgeBacklog, port: Int) throws -> ManagedProcess {
        try ManagedProcess(
            name: "mosquitto_pub -l", executable: "/bin/sh",
            arguments: ["-c", "\(Tools.mosquittoPub) -h 127.0.0.1 -p \(port) -q 1 -V 5 -t hrbridge/v1/backlog/measurement -l < \(backlog.path)"])
    }

    /// A broker holding a real backlog, as deploy/mosquitto/keepalive-bridge.conf configures it.
    static let backlogBroker = "max_queued_messages 100000\n"

    @Test("50 000 QoS 1 messages published as fast as possible to the mqtt bridge topic: all stored")
    func mqtt() async throws {
        let broker = try MosquittoBroker(extraConfig: Self.backlogBroker)
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("backlog-mqtt")
        let backlog = try BridgeBacklog(in: directory, count: 50_000)
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"mqtt\"\nstall_timeout_s = 1000\n" + Self.config,
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        // Subscribed once status says so (the SUBSCRIBE goes out on connect, before the first status).
        _ = try await watcher.waitFor(timeout: 20, "the agent online") { $0.json?["state"] as? String == "online" }
        let started = Date()
        let publisher = try Self.publish(backlog, port: broker.port)
        #expect(await publisher.waitForExit(timeout: 120) == 0, "mosquitto_pub: \(publisher.text.suffix(500))")
        let published = Date().timeIntervalSince(started)
        try await Wait.until(timeout: 120, "50 000 stored (\(Self.stored(agent.storePath)))") { Self.stored(agent.storePath) == 50_000 }
        let seconds = Date().timeIntervalSince(started)
        let peak = Self.peakMiB(agent.process!.pid)
        try await Self.expectWhole(agent, backlog, watcher)
        #expect(agent.stop() == 0)
        FaultSuite.report(
            "backlog: mqtt bridge, 50 000 QoS 1 messages published as fast as possible",
            "all 50 000 stored in \(FaultSuite.format(seconds)) s (published in \(FaultSuite.format(published)) s), valid_samples 50 000, 0 dropped; agent VmHWM \(FaultSuite.format(peak)) MiB")
    }

    @Test("50 000 QoS 1 messages while the store's disk is full: the agent holds a bounded number, the broker the rest; all stored once space is back")
    func mqttWhileStoreFails() async throws {
        let disk = try await SmallDisk(megabytes: 64)
        let broker = try MosquittoBroker(extraConfig: Self.backlogBroker)
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let directory = try TemporaryDirectory("backlog-mqtt-full")
        let backlog = try BridgeBacklog(in: directory, count: 50_000)
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[hr]\ntransport = \"mqtt\"\nstall_timeout_s = 1000\n" + Self.config,
            store: disk.path + "/k.db", directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        _ = try await watcher.waitFor(timeout: 20, "the agent online") { $0.json?["state"] as? String == "online" }
        try disk.fill()
        _ = try await watcher.waitFor(timeout: 20, "status naming the storage error") { DiskFullRig.storeError($0) != nil }
        let publisher = try Self.publish(backlog, port: broker.port)
        // The broker has acknowledged every message to the publisher: it holds what the agent does not.
        #expect(await publisher.waitForExit(timeout: 300) == 0, "mosquitto_pub: \(publisher.text.suffix(500))")
        // The agent takes what it may hold, and says how much in status.
        var held = 0
        try await Wait.until(timeout: 20, "status reporting the samples held in memory (\(held))") {
            let status = watcher.messages.last { $0.topic.hasSuffix("/status") && $0.json?["state"] as? String == "online" }
            held = ((status?.json?["store"] as? [String: Any])?["pending_samples"] as? Int) ?? 0
            return held >= 20_000
        }
        try await Task.sleep(for: .seconds(2))
        let heldAfter = ((watcher.messages.last { $0.topic.hasSuffix("/status") }?.json?["store"] as? [String: Any])?["pending_samples"] as? Int) ?? 0
        #expect(heldAfter <= 20_000 + TransportThread.defaultCapacity, "bounded: \(heldAfter)")
        let peakWhileFull = Self.peakMiB(agent.process!.pid)
        #expect(Self.stored(agent.storePath) == 0, "nothing can be stored yet")
        disk.free()
        let freed = Date()
        try await Wait.until(timeout: 180, "50 000 stored after space came back (\(Self.stored(agent.storePath)))") {
            Self.stored(agent.storePath) == 50_000
        }
        let drained = Date().timeIntervalSince(freed)
        let peak = Self.peakMiB(agent.process!.pid)
        try await Self.expectWhole(agent, backlog, watcher)
        #expect(agent.stop() == 0)
        FaultSuite.report(
            "backlog: mqtt bridge, 50 000 QoS 1 messages while the store's disk is full",
            "broker acknowledged all 50 000 to the publisher while the agent held \(heldAfter) in memory (VmHWM \(FaultSuite.format(peakWhileFull)) MiB), so the broker held at least \(50_000 - heldAfter - 4 * TransportThread.defaultCapacity) (the rest of the 50 000, less the agent's queue); all 50 000 stored \(FaultSuite.format(drained)) s after space came back, 0 dropped; VmHWM \(FaultSuite.format(peak)) MiB")
    }
}
