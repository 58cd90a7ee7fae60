import Foundation
import Testing
import TestKit

@Suite("Fault: sensors going away", .enabled(if: FaultSuite.enabled, FaultSuite.reason))
struct SensorFaults {
    static func state(_ message: MQTTSubscriber.Message, _ sensor: String) -> String? {
        guard message.topic.hasSuffix("/status") else { return nil }
        return (message.json?[sensor] as? [String: Any])?["state"] as? String
    }

    /// Waits for a status, after the first `after` messages, whose `sensor` state satisfies `accept`.
    static func waitForState(
        _ watcher: MQTTSubscriber, after: Int, _ sensor: String, timeout: Double, _ what: String, _ accept: @escaping (String) -> Bool
    ) async throws {
        try await Wait.until(timeout: timeout, what) {
            watcher.messages.dropFirst(after).contains { state($0, sensor).map(accept) ?? false }
        }
    }

    @Test("gpsd killed and restarted 20 times: reacquired every time, within fix_timeout + the backoff cap")
    func gpsdRestarts() async throws {
        let fixTimeout = 3.0, backoffCap = 1.0  // AgentProcess sets gps.reconnect_max_s = 1
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let gpsPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gpsPort, gpsFixTimeout: fixTimeout,
            extraConfig: "[schedule]\nstatus_interval_s = 60\n", environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        var recoveries: [Double] = []
        for round in 1...20 {
            let before = watcher.messages.count
            let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), port: gpsPort, cycle: 0.1)
            let up = Date()
            try await Self.waitForState(watcher, after: before, "gps", timeout: 30, "round \(round): gps fixed again") { $0 == "fixed" }
            recoveries.append(Date().timeIntervalSince(up))
            let beforeKill = watcher.messages.count
            gps.stop()  // gpsfake and its gpsd
            try await Self.waitForState(watcher, after: beforeKill, "gps", timeout: 30, "round \(round): gps loss noticed") { $0 != "fixed" }
        }
        // gpsd's own start (it needs a few sentences to recognise the receiver) comes on top.
        let gpsdWarmUp = 3.0
        #expect((recoveries.max() ?? 0) <= fixTimeout + backoffCap + gpsdWarmUp, "recoveries: \(recoveries)")
        FaultSuite.report(
            "gpsd killed and restarted × 20",
            "fixed again every time: p50 \(FaultSuite.format(percentile(recoveries, 0.5))) s, max \(FaultSuite.format(recoveries.max() ?? 0)) s after gpsd is back (bound: fix_timeout \(Int(fixTimeout)) s + backoff cap \(Int(backoffCap)) s + gpsd warm-up)")
        #expect(agent.stop() == 0)
    }

    @Test("a receiver with no fix: the session is reopened every fix_timeout (+ backoff cap), 10 times")
    func receiverWithoutFix() async throws {
        let fixTimeout = 2.0, backoffCap = 1.0
        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/gps_reacquire")
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu303-nofix.log"), cycle: 0.05)
        let agent = try AgentProcess(brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: fixTimeout)
        let reacquisitions = try await events.waitFor(count: 10, timeout: 60, "ten reacquisitions") { _ in true }.prefix(10)
        // The agent's own stamps of the reopenings, not when this process got round to noticing
        // them: with every fault suite running at once in this process (the million-input fuzzing
        // among them) its tasks can wait seconds for a thread, which is no property of the agent.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let stamps = reacquisitions.compactMap { ($0.json?["ts"] as? String).flatMap(formatter.date(from:)) }
        #expect(stamps.count == 10, "every event carries its time: \(reacquisitions.map(\.payload))")
        let intervals = zip(stamps, stamps.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect((intervals.max() ?? 0) <= fixTimeout + backoffCap + 1, "intervals: \(intervals)")
        FaultSuite.report(
            "receiver without a fix",
            "10 reacquisitions, every \(FaultSuite.format(percentile(intervals, 0.5))) s (max \(FaultSuite.format(intervals.max() ?? 0)) s; bound \(Int(fixTimeout)) + \(Int(backoffCap)) s)")
        #expect(agent.stop() == 0)
    }

    static let stallTimeout = 1.0, backoffCap = 2.0

    /// A UDP bridge that stalls silently 20 times, once, for the two claims below; the agent, the
    /// sender and the broker are stopped before the outcome is handed out.
    struct Stalls: Sendable {
        let detections: [Double]
        let resumptions: [Double]
        let exitStatus: Int32?
    }

    static let stallsOutcome = Task { () async throws -> Stalls in
        let (stallTimeout, backoffCap) = (Self.stallTimeout, Self.backoffCap)
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
        let udpPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(udpPort)\nstall_timeout_s = \(stallTimeout)\nreacquire_max_s = \(backoffCap)\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        let sender = HeartRateSender(port: udpPort, hz: 10, sensor: "stall")
        defer { sender.stop() }
        var detections: [Double] = []
        var resumptions: [Double] = []
        let stampFormatter = ISO8601DateFormatter()
        stampFormatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for round in 1...20 {
            let before = watcher.messages.count
            try await Self.waitForState(watcher, after: 0, "hr", timeout: 30, "round \(round): streaming") { $0 == "streaming" }
            sender.pause()
            let silent = Date()
            try await Wait.until(timeout: 30, "round \(round): an hr_reacquire event") {
                watcher.messages.dropFirst(before).contains { $0.topic.hasSuffix("/event/hr_reacquire") }
            }
            // When the agent noticed, by its own stamp on the event (the test's own delivery
            // and scheduling under a loaded machine are no property of the agent).
            let event = watcher.messages.dropFirst(before).first { $0.topic.hasSuffix("/event/hr_reacquire") }
            let noticed = (event?.json?["ts"] as? String).flatMap(stampFormatter.date(from:)) ?? Date()
            detections.append(noticed.timeIntervalSince(silent))
            let beforeResume = watcher.messages.count
            sender.resume()
            let resumed = Date()
            try await Self.waitForState(watcher, after: beforeResume, "hr", timeout: 30, "round \(round): streaming again") { $0 == "streaming" }
            resumptions.append(Date().timeIntervalSince(resumed))
        }
        FaultSuite.report(
            "bridge stalls silently × 20",
            "reacquired every time: noticed after p50 \(FaultSuite.format(percentile(detections, 0.5))) s, max \(FaultSuite.format(detections.max() ?? 0)) s (bound \(Int(stallTimeout)) + \(Int(backoffCap)) s); streaming again after max \(FaultSuite.format(resumptions.max() ?? 0)) s")
        return Stalls(detections: detections, resumptions: resumptions, exitStatus: agent.stop())
    }

    @Test("a bridge that stalls silently 20 times: each stall is noticed and reacquired within stall_timeout + the backoff cap")
    func bridgeStalls() async throws {
        let outcome = try await Self.stallsOutcome.value
        #expect(outcome.detections.count == 20)
        #expect((outcome.detections.max() ?? 0) <= Self.stallTimeout + Self.backoffCap + 1, "detections: \(outcome.detections)")
        #expect(outcome.exitStatus == 0)
    }

    @Test("a bridge that stalls silently 20 times: streaming resumes after each stall")
    func bridgeStallsResume() async throws {
        #expect(try await Self.stallsOutcome.value.resumptions.count == 20)
    }
}
