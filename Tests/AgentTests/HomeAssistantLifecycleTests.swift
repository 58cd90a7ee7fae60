import Foundation
import Testing
import TestKit

@testable import Store

/// The agent's discovery over a real mosquitto: announced through the outbox, again on Home
/// Assistant's birth (never a flood), removed when a configuration turns entities off; and the
/// heart rate now in `status.hr.bpm`.
@Suite("Home Assistant discovery lifecycle")
struct HomeAssistantLifecycleTests {
    static let node = "homeassistant/+/keepalive_testpi/+/config"

    /// The retained configs of `keepalive_testpi` the broker holds now: a fresh subscriber's
    /// retained messages, read until a retained marker published after them has come too.
    static func retainedConfigs(port: Int) async throws -> [String: String] {
        let marker = "homeassistant/sensor/zz_marker/marker/config"
        try await MQTTTools.publish(port: port, topic: marker, message: "{}", retain: true)
        let subscriber = try await MQTTSubscriber(port: port, filter: "homeassistant/#")
        try await subscriber.waitFor("the retained marker") { $0.topic == marker }
        try await Task.sleep(for: .milliseconds(300))
        subscriber.stop()
        return Dictionary(
            subscriber.messages.filter { $0.retained && $0.topic.contains("/keepalive_testpi/") }.map { ($0.topic, $0.payload) },
            uniquingKeysWith: { $1 })
    }

    /// Waits until the broker holds `count` retained configs of `keepalive_testpi`; returns them.
    @discardableResult
    /// `log`: the agent's, appended to the failure (why it announced nothing, when it did not).
    static func waitForRetainedConfigs(
        port: Int, count: Int, timeout: Double = 15, log: @autoclosure () -> String = ""
    ) async throws -> [String: String] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let configs = try await retainedConfigs(port: port)
            if configs.count == count { return configs }
            if Date() > deadline {
                throw WaitTimeout(description: "\(count) retained configs; the broker holds \(configs.count): \(configs.keys.sorted())\(log().suffix(3000))")
            }
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    @Test("queued in the outbox while the broker is away, delivered retained once it is back")
    func announcedThroughTheOutbox() async throws {
        let broker = try MosquittoBroker()
        broker.stop()
        let agent = try AgentProcess(brokerPort: broker.port)
        let outbox = {
            (try? SQLiteConnection(path: agent.storePath, readOnly: true)
                .scalarInt("SELECT count(*) FROM outbox WHERE topic LIKE 'homeassistant/%/keepalive_testpi/%/config' AND retain = 1 AND delivered = 0")) ?? nil
        }
        // GPS is off in the test kit's config: the 18 entities that do not need it.
        try await Wait.until(timeout: 10, "18 discovery configs in the outbox; agent:\n\(agent.log.suffix(1500))") { outbox() == 18 }
        try broker.start()
        try await Wait.until(timeout: 20, "the outbox drained (\(outbox().map(String.init) ?? "unreadable") left); agent:\n\(agent.log.suffix(3000))") { outbox() == 0 }
        let retained = try await Self.waitForRetainedConfigs(port: broker.port, count: 18)
        let config = try #require(retained["homeassistant/sensor/keepalive_testpi/heart_rate/config"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any])
        #expect(json["state_topic"] as? String == "keepalive/testpi/status")
        #expect(json["unit_of_measurement"] as? String == "bpm")
        #expect(agent.stop() == 0)
    }

    @Test("Home Assistant's birth makes the agent announce again, a flood of births at most once per interval, a retained birth not at all")
    func reannouncedOnBirth() async throws {
        let broker = try MosquittoBroker()
        // An old retained "online" is there before the agent starts: not a birth.
        try await MQTTTools.publish(port: broker.port, topic: "homeassistant/status", message: "online", retain: true)
        let topic = "homeassistant/sensor/keepalive_testpi/outbox_pending/config"
        let configs = try await MQTTSubscriber(port: broker.port, filter: topic)
        let agent = try AgentProcess(brokerPort: broker.port, environment: ["KEEPALIVE_HA_REANNOUNCE_MIN_S": "3"])
        try await configs.waitFor("the start announcement") { $0.topic == topic }
        try await agent.process!.waitForLine(containing: "MQTT connected")
        try await Task.sleep(for: .seconds(4))
        #expect(configs.messages.count == 1, "the retained birth caused an announcement: \(configs.messages.count)")
        try await MQTTTools.publish(port: broker.port, topic: "homeassistant/status", message: "", retain: true)

        // One birth: announced again at once (the interval since the start is over).
        try await MQTTTools.publish(port: broker.port, topic: "homeassistant/status", message: "online")
        _ = try await configs.waitFor(count: 2, timeout: 5, "the announcement after a birth") { $0.topic == topic }
        // Twenty births in 3 s (a client gone wrong): at most one announcement per 3 s interval,
        // the last when the interval after the last birth is over; none after that.
        try await MQTTTools.publish(
            port: broker.port, topic: "homeassistant/status", message: "online", extraArguments: ["--repeat", "20", "--repeat-delay", "0.15"])
        _ = try await configs.waitFor(count: 3, timeout: 30, "an announcement after the flood") { $0.topic == topic }
        // Every birth counted into some announcement (below) — then no announcement is owed.
        try await Wait.until(timeout: 30, "all 21 births answered by announcements") { Self.birthsAnnounced(agent.log).reduce(0, +) == 21 }
        // At most one announcement per 3-s interval, on the agent's own log stamps.
        let stamps = Self.announcementStamps(agent.log)
        for (earlier, later) in zip(stamps, stamps.dropFirst()) {
            // 3 s, less what may pass between taking the interval's start and writing the line.
            #expect(later.timeIntervalSince(earlier) >= 2.5, "announced \(later.timeIntervalSince(earlier)) s after the previous announcement: \(stamps)")
        }
        #expect(stamps.count >= 2, "the single birth and the flood were announced: \(stamps)")
        #expect(Self.birthsAnnounced(agent.log).reduce(0, +) == 21, "\(Self.birthsAnnounced(agent.log))")
        #expect(agent.stop() == 0)
    }

    static let gpsTopics = ["device_tracker/keepalive_testpi/location", "sensor/keepalive_testpi/distance_today",
                            "sensor/keepalive_testpi/moving_time_today", "binary_sensor/keepalive_testpi/gps_fix",
                            "sensor/keepalive_testpi/gps_satellites", "sensor/keepalive_testpi/gps_fix_age"]
        .map { "homeassistant/\($0)/config" }

    /// Three agents in turn on one broker: with GPS (24 entities), without (18), with discovery
    /// off (none). Run once for the two claims on it; every agent and the broker are stopped
    /// before the outcome is handed out.
    struct TurnedOff: Sendable {
        let firstStop: Int32?
        let emptied: Result<[MQTTSubscriber.Message], any Error>
        let left: Result<[String: String], any Error>
        let secondStop: Int32?
        let noneLeft: Result<[String: String], any Error>
        let thirdStop: Int32?
    }

    static let turnedOff = Task { () async throws -> TurnedOff in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let gpsPort = Ports.free()  // nothing listens: only the configuration matters here
        let first = try AgentProcess(brokerPort: broker.port, gpsPort: gpsPort)
        try await Self.waitForRetainedConfigs(port: broker.port, count: 24)
        let firstStop = first.stop()

        let removals = try await MQTTSubscriber(port: broker.port, filter: Self.node)
        defer { removals.stop() }
        let second = try AgentProcess(brokerPort: broker.port)
        let emptied = await captured { try await removals.waitFor(count: 6, timeout: 15, "six empty configs") { !$0.retained && $0.payload.isEmpty } }
        let left = await captured { try await Self.waitForRetainedConfigs(port: broker.port, count: 18) }
        let secondStop = second.stop()

        let third = try AgentProcess(brokerPort: broker.port, extraConfig: "[homeassistant]\nenabled = false\n")
        let noneLeft = await captured {
            try await third.process!.waitForLine(containing: "Home Assistant discovery is off")
            return try await Self.waitForRetainedConfigs(port: broker.port, count: 0)
        }
        return TurnedOff(
            firstStop: firstStop, emptied: emptied, left: left, secondStop: secondStop, noneLeft: noneLeft, thirdStop: third.stop())
    }

    @Test("entities a new configuration turns off are removed (empty retained config)")
    func removedWhenTurnedOff() async throws {
        let outcome = try await Self.turnedOff.value
        #expect(outcome.firstStop == 0)
        #expect(Set(try outcome.emptied.get().map(\.topic)) == Set(Self.gpsTopics))
        #expect(Set(try outcome.left.get().keys).isDisjoint(with: Self.gpsTopics))
        #expect(outcome.secondStop == 0)
    }

    @Test("every entity is removed when discovery is disabled")
    func allRemovedWhenDisabled() async throws {
        let outcome = try await Self.turnedOff.value
        #expect(try outcome.noneLeft.get().isEmpty)
        #expect(outcome.thirdStop == 0)
    }

    @Test("status.hr.bpm: null before a valid measurement, then the last valid bpm received")
    func heartRateNowInStatus() async throws {
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let port = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(port)\nstall_timeout_s = 600\n[schedule]\nstatus_interval_s = 1\n")
        let first = try await status.waitFor("an online status") { $0.json?["state"] as? String == "online" }
        let hr = try #require(first.json?["hr"] as? [String: Any])
        #expect(hr["bpm"] is NSNull, "\(first.payload)")
        try await agent.process!.waitForLine(containing: "Starting service sl-service=BridgeService")
        let lines = Array(try HeartRateFixture.lines(on: HeartRateFixture.yesterday).prefix(5))
        let last = try #require(try JSONSerialization.jsonObject(with: Data(lines[4].utf8)) as? [String: Any])
        let bpm = try #require(last["bpm"] as? Int)
        let reported = { status.messages.contains { ($0.json?["hr"] as? [String: Any])?["bpm"] as? Int == bpm } }
        // A datagram sent while the socket is being bound is lost, as UDP is: send again until one
        // gets through. Harmless: a copy is a replay, stored once.
        for attempt in 1...5 where !reported() {
            UDPSender.send(port: port, lines: lines)
            try? await Wait.until(timeout: 3, "a status with hr.bpm = \(bpm) (try \(attempt))", reported)
        }
        #expect(reported(), "no status with hr.bpm = \(bpm): \(status.messages.suffix(3))")
        #expect(agent.stop() == 0)
    }
}

/// deploy/mosquitto/keepalive-device.acl, as shipped: what the agent and Home Assistant need for discovery.
@Suite("Home Assistant through the broker ACL")
struct HomeAssistantACLTests {
    /// Two agents in turn as the device user, and Home Assistant's user, under the shipped ACL;
    /// run once for the three claims on it. The agents and the broker are stopped before the
    /// outcome is handed out.
    struct Outcome: Sendable {
        let announced: Result<[MQTTSubscriber.Message], any Error>
        let reannounced: Result<[MQTTSubscriber.Message], any Error>
        let firstLog: String
        let firstStop: Int32?
        let cleared: Result<[MQTTSubscriber.Message], any Error>
        let secondLog: String
        let secondStop: Int32?
    }

    static let topic = "homeassistant/sensor/keepalive_pi/outbox_pending/config"

    static let outcome = Task { () async throws -> Outcome in
        let directory = try TemporaryDirectory("ha-acl")
        let certificates = try await TestCertificates.make(in: directory)
        let passwords = try await TestCertificates.passwordFile(in: directory, users: [("keepalive-pi", "pi-pass"), ("homeassistant", "ha-pass")])
        let broker = try MosquittoBroker.tls(certificates, passwordFile: passwords, extraConfig: "acl_file \(BrokerACLTests.acl)")
        defer { broker.stop() }
        let homeAssistant = ["--cafile", certificates.caFile, "-u", "homeassistant", "-P", "ha-pass"]
        let seen = try await MQTTSubscriber(port: broker.port, filter: "homeassistant/#", extraArguments: homeAssistant)
        let secret = try directory.write("mqtt.password", "pi-pass\n")
        chmod(secret, 0o600)
        func agent(_ extra: String) throws -> AgentProcess {
            let agent = try AgentProcess(
                brokerPort: broker.port, deviceID: "pi", extraConfig: extra, directory: directory,
                environment: ["KEEPALIVE_HA_REANNOUNCE_MIN_S": "1"], start: false)
            try agent.addToConfig(section: "mqtt", lines: [
                "tls = true", "cafile = \"\(certificates.caFile)\"", "username = \"keepalive-pi\"", "password_file = \"\(secret)\"",
            ])
            try agent.start()
            return agent
        }
        let first = try agent("")
        let announced = await captured {
            try await seen.waitFor(count: 18, timeout: 20, "the 18 configs, read as Home Assistant") { $0.topic.hasSuffix("/config") }
        }
        _ = try await BrokerACLTests.publish(port: broker.port, tls: homeAssistant, topic: "homeassistant/status", message: "online")
        let reannounced = await captured {
            try await seen.waitFor(count: 2, timeout: 10, "the configs again after Home Assistant's birth") { $0.topic == Self.topic }
        }
        let firstLog = first.log
        let firstStop = first.stop()

        // Without a bridge only the agent's own two diagnostics remain: it must read its retained
        // configs back to clear the other fourteen.
        let second = try agent("[hr]\ntransport = \"none\"\n")
        let cleared = await captured {
            try await seen.waitFor(count: 14, timeout: 20, "fourteen configs cleared") { $0.topic.hasSuffix("/config") && $0.payload.isEmpty }
        }
        let secondLog = second.log
        return Outcome(
            announced: announced, reannounced: reannounced, firstLog: firstLog, firstStop: firstStop, cleared: cleared,
            secondLog: secondLog, secondStop: second.stop())
    }

    @Test("the device user announces the device, and Home Assistant's user reads its configs")
    func announcedUnderTheACL() async throws {
        let outcome = try await Self.outcome.value
        #expect(try outcome.announced.get().count >= 18)
        #expect(!outcome.firstLog.contains("broker refused a message"), "\(outcome.firstLog.suffix(2000))")
        #expect(outcome.firstStop == 0)
    }

    @Test("Home Assistant's user announces itself, and the device user hears its birth and announces again")
    func birthUnderTheACL() async throws {
        #expect(try await Self.outcome.value.reannounced.get().count >= 2)
    }

    @Test("the device user reads its retained configs back and removes those no longer announced")
    func discoveryUnderTheACL() async throws {
        let outcome = try await Self.outcome.value
        #expect(!(try outcome.cleared.get()).contains { $0.topic == Self.topic })
        #expect(!outcome.secondLog.contains("broker refused a message"), "\(outcome.secondLog.suffix(2000))")
        #expect(outcome.secondStop == 0)
    }

}

extension HomeAssistantLifecycleTests {
    /// The births each announcement answered, from the agent's log.
    static func birthsAnnounced(_ log: String) -> [Int] {
        log.split(separator: "\n").filter { $0.contains("announced the device to Home Assistant") }
            .compactMap { $0.split(separator: " ").first { $0.hasPrefix("births_since_last=") } }
            .compactMap { Int($0.dropFirst("births_since_last=".count)) }
    }

    /// When the agent announced because of a birth (its log line's own stamp).
    static func announcementStamps(_ log: String) -> [Date] {
        log.split(separator: "\n").filter { $0.contains("announced the device to Home Assistant") && $0.contains("reason=\"Home Assistant online\"") }
            .compactMap { $0.split(separator: " ").first.flatMap { QueryFreshnessTests.parseTimestamp(String($0)) } }
    }

}
