import Foundation
import FoundationXML
import Logging
import SensorBridge
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import Bus
@testable import Store

/// Per-date queries over a real broker with real MQTT clients, and the same answers from the
/// command line: the rig (`Setup`) and the flood here; one day's reply, its routing, its errors
/// and its formats in QueryReplyTests, QueryRoutingTests, QueryErrorTests and QueryFormatsTests.
@Suite("Queries")
struct QueryTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// A store holding one past day: the real heart-rate hour and an hour's walk at 1 Hz.
    struct Setup {
        let broker: MosquittoBroker
        let agent: AgentProcess
        let day: LocalDay
        let fixes: [StoredFix]
        let heartRates: [StoredHeartRate]
        var topic: String { "keepalive/testpi/selection/date" }

        static func make(extraConfig: String = "[hr]\ntransport = \"none\"\n") async throws -> Setup {
            // mosquitto drops QoS 1 messages for a subscriber past 1000 queued by default: a flood's
            // replies to one slow mosquitto_sub would be lost at the broker, not by the agent.
            let broker = try MosquittoBroker(extraConfig: "max_queued_messages 0\n")
            let agent = try AgentProcess(brokerPort: broker.port, extraConfig: extraConfig, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"], start: false)
            let day = LocalDay(containing: Date(), timeZone: utc).previous.previous
            let start = day.boundsMs.start + 8 * 3_600_000
            let lines = try HeartRateFixture.lines(on: day.description)
            let heartRates = try lines.compactMap {
                BridgeService.stored(try BridgeMessage.parse(Array($0.utf8)).get(), received: Date(), synchronised: true)
            }
            // North at 1.4 m/s from 52.5 N 13.4 E.
            let fixes = (0..<3600).map { second in
                StoredFix(
                    timeMs: start + Int64(second) * 1000, receivedMs: start, lat: 52.5 + Double(second) * 1.4 / 111_320, lon: 13.4,
                    altMSL: 35.2, speed: 1.4, track: 0, eph: 5, epv: 8, mode: 3, satellites: 9, timeSource: "gps")
            }
            do {
                let store = try Store(path: agent.storePath)
                try await store.write(fixes: fixes, heartRates: heartRates)
            }
            try agent.start()
            try await agent.process!.waitForLine(containing: "Starting service sl-service=QueryService")
            let setup = Setup(broker: broker, agent: agent, day: day, fixes: fixes, heartRates: heartRates)
            // Answering once its subscription is in place: ask until a reply comes.
            var answered = false
            for _ in 1...20 where !answered {
                answered = (try? await setup.request("\(day)", responseTopic: "reply/ready", extra: ["-W", "1"])) != nil
            }
            #expect(answered, "the agent never answered a query")
            return setup
        }

        func request(_ message: String, responseTopic: String = "reply/me", extra: [String] = []) async throws -> String {
            try await MQTTTools.request(port: broker.port, topic: topic, message: message, responseTopic: responseTopic, extraArguments: extra)
        }

        func query(_ arguments: [String]) async throws -> (status: Int32?, output: String, errors: String) {
            let directory = try TemporaryDirectory()
            let out = directory.file("out"), err = directory.file("err")
            let process = try ManagedProcess(
                name: "keepalive query", executable: "/bin/sh",
                arguments: ["-c", "exec \"$0\" \"$@\" >\(out) 2>\(err)", Tools.agent] + arguments + ["--config", agent.configPath])
            let status = await process.waitForExit(timeout: 60)
            return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "", (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        }
    }

    static func attribute(_ element: XMLElement, _ name: String) -> String? {
        element.attributes?.first { $0.name == name || $0.localName == name }?.stringValue
    }

    static func object(_ text: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]
    }

    @Test("3000 malformed or random requests in a burst: the agent stays up, every request gets one reply (answered or rate-limited), heart-rate ingest goes on")
    func flood() async throws {
        let udpPort = Ports.free()
        let setup = try await Setup.make(extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(udpPort)\n")
        let replies = try await MQTTSubscriber(port: setup.broker.port, filter: "reply/flood")
        let directory = try TemporaryDirectory()
        let burst = try RequestBurst.start(
            port: setup.broker.port, topic: setup.topic, lines: RequestBurst.payloads(count: 3000, date: "\(setup.day)", seed: 7),
            responseTopic: "reply/flood", in: directory)
        // Heart rate keeps arriving during the flood and is stored.
        let live = (0..<60).map { i in
            #"{"ts":"\#(ISO8601.format(Date().addingTimeInterval(Double(i) - 60)))","sensor":"live","raw":"0648"}"#
        }
        do {
            try await HeartRateDelivery.send(live, port: udpPort, storePath: setup.agent.storePath, chunk: 20)
        } catch {
            let log = setup.agent.log.split(separator: "\n").filter { !$0.contains("Starting service") }.suffix(40)
            Issue.record("\(error)\nagent log:\n\(log.joined(separator: "\n"))")
            throw error
        }
        #expect(await burst.waitForExit(timeout: 60) == 0)
        let all = try await replies.waitFor(count: 3000, timeout: 60, "a reply to every request") { _ in true }
        #expect(all.count == 3000, "exactly one reply each")
        let statuses = Dictionary(grouping: all, by: \.userProperties).mapValues(\.count)
        #expect(statuses["status:429"] ?? 0 > 0, "\(statuses)")
        #expect(Set(statuses.keys).isSubset(of: ["status:200", "status:400", "status:413", "status:429"]), "\(statuses)")
        #expect(setup.agent.process?.isRunning == true)
        #expect(setup.agent.stop() == 0)
    }
}

/// Messages a client received, collected from its event stream.
final class MessageLog: Sendable {
    private let received = Mutex<[MQTTIncomingMessage]>([])

    init(_ client: MQTTClient) {
        Task { [weak self] in
            for await event in client.events {
                if case .message(let message) = event { self?.received.withLock { $0.append(message) } }
            }
        }
    }

    var messages: [MQTTIncomingMessage] { received.withLock { $0 } }
}
