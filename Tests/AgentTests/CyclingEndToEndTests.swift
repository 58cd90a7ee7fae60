import Foundation
import Testing
import TestKit

@testable import Store

/// A bike's CSC sensor end to end: a `command` bridge child prints `"char":"2a5b"` lines of a
/// synthesised 20-minute ride at 1 Hz (`SynthesisedRide`: 3.3 wheel turns a second on a
/// 2100 mm wheel, 85 rpm, both counts wrapping), the real agent stores them, and `health/today`,
/// the `selection/date` reply (mosquitto_rr) and Home Assistant's discovery say what the ride
/// was. The same lines arrive four ways — one backlog, streamed live, in reversed order, and
/// sent again by each restart of the bridge — each on its own agent and device id on one
/// mosquitto, and must give the same `riding`.
@Suite("A ride's CSC sensor end to end")
struct CyclingEndToEndTests {
    enum Arrival: String, Sendable, CaseIterable {
        case backlog = "one backlog"
        case live = "streamed live"
        case reversed = "in reversed order"
        /// The backlog again at each restart of the bridge's child (it stalls for 2 s): stored once.
        case replayed = "sent again by each restart of the bridge"
    }

    struct Observed: Sendable {
        var today: String
        var reply: String
        /// `csc_record` rows once the agent answered: every notification once, however often sent.
        var storedRows: Int64
        var discovery: [String: String]

        static func object(_ text: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        }
        var todayRiding: [String: Any]? { Self.object(today)["riding"] as? [String: Any] }
        var replyRiding: [String: Any]? { (Self.object(reply)["health"] as? [String: Any])?["riding"] as? [String: Any] }
    }

    static let circumferenceMm = 2100
    static let entities = ["riding_distance_today", "riding_cadence_today"]

    static let played = Task { () async throws -> (SynthesisedRide, [Arrival: Result<Observed, any Error>]) in
        // Ending a minute ago on a whole second, in a zone where it is midday: one local day.
        let nowS = Int64(Date().timeIntervalSince1970)
        let ride = SynthesisedRide(startMs: (nowS - 60 - 1200) * 1000, seconds: 1200)
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let zone = MiddayZone.at().identifier
        var results: [Arrival: Result<Observed, any Error>] = [:]
        await withTaskGroup(of: (Arrival, Result<Observed, any Error>).self) { group in
            for (index, arrival) in Arrival.allCases.enumerated() {
                group.addTask {
                    (arrival, await captured { try await run(ride, arrival, broker: broker, deviceID: "ride\(index)", zone: zone) })
                }
            }
            for await (arrival, observed) in group { results[arrival] = observed }
        }
        return (ride, results)
    }

    static func run(_ ride: SynthesisedRide, _ arrival: Arrival, broker: MosquittoBroker, deviceID: String, zone: String) async throws -> Observed {
        let directory = try TemporaryDirectory("csc-\(arrival)")
        let file = try directory.write("ride.ndjson", ride.lines.joined(separator: "\n") + "\n")
        let pids = directory.file("pids")
        let command = switch arrival {
        case .backlog: #"["/bin/sh", "-c", "cat \#(file); exec sleep 100000"]"#
        case .live: #"["python3", "\#(Tools.fixture("tools/paced_lines.py"))", "\#(file)", "0.01"]"#
        case .reversed: #"["/bin/sh", "-c", "tac \#(file); exec sleep 100000"]"#
        case .replayed: #"["/bin/sh", "-c", "echo $$ >> \#(pids); cat \#(file); exec sleep 100000"]"#
        }
        let stall = arrival == .replayed ? "stall_timeout_s = 2\nreacquire_max_s = 2" : "stall_timeout_s = 3600"
        let today = try await MQTTSubscriber(port: broker.port, filter: "keepalive/\(deviceID)/health/today")
        defer { today.stop() }
        let agent = try AgentProcess(
            brokerPort: broker.port, deviceID: deviceID, timeZone: zone,
            extraConfig: """
                [hr]
                transport = "command"
                command = \(command)
                \(stall)
                [schedule]
                today_interval_s = 2
                [bike]
                wheel_circumference_mm = \(circumferenceMm)

                """,
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        let whole = try await agent.explainingFailure {
            try await today.waitFor(timeout: 90, "health/today with the ride's \(ride.wheelRevolutions) wheel turns (\(arrival))") {
                ($0.json?["riding"] as? [String: Any])?["wheel_revolutions"] as? Int == ride.wheelRevolutions
            }
        }
        let date = try #require(whole.json?["date"] as? String, "\(whole)")
        if arrival == .replayed {
            let starts = { (try? String(contentsOfFile: pids, encoding: .utf8))?.split(separator: "\n").count ?? 0 }
            try await Wait.until(timeout: 30, "the bridge started three times (two replays); log:\n\(agent.log.suffix(1500))") { starts() >= 3 }
        }
        try await agent.process?.waitForLine(containing: "Starting service sl-service=QueryService", timeout: 30)
        let reply = try await MQTTTools.request(
            port: broker.port, topic: "keepalive/\(deviceID)/selection/date", message: #"{"date":"\#(date)","include":["health"]}"#,
            responseTopic: "reply/\(deviceID)", timeout: 15)
        // Home Assistant's configs are retained: a client subscribing now gets them at once.
        let node = "keepalive_\(deviceID)"
        let configs = try await MQTTSubscriber(port: broker.port, filter: "homeassistant/sensor/\(node)/+/config")
        defer { configs.stop() }
        let announced = try await configs.waitFor(count: Self.entities.count, timeout: 20, "the riding entities' discovery configs") { message in
            message.retained && Self.entities.contains { message.topic == "homeassistant/sensor/\(node)/\($0)/config" }
        }
        let stored = try SQLiteConnection(path: agent.storePath, readOnly: true).scalarInt("SELECT count(*) FROM csc_record") ?? -1
        return Observed(
            today: whole.payload, reply: reply, storedRows: stored,
            discovery: Dictionary(announced.map { ($0.topic, $0.payload) }, uniquingKeysWith: { $1 }))
    }

    static func observed(_ arrival: Arrival) async throws -> (SynthesisedRide, Observed) {
        let (ride, results) = try await played.value
        let result = try #require(results[arrival], "\(arrival) was not played")
        return (ride, try result.get())
    }

    @Test("health/today's riding is what the ride was: turns × 2100 mm, rolling time, 85 rpm")
    func todayFigures() async throws {
        let (ride, observed) = try await Self.observed(.backlog)
        let riding = try #require(observed.todayRiding, "\(observed.today)")
        let expected = ride.expected(circumferenceMm: Self.circumferenceMm)
        print("csc: \(ride.wheelRevolutions) wheel turns, \(ride.crankRevolutions) crank turns; health/today riding \(riding)")
        #expect(riding["crank_revolutions"] as? Int == ride.crankRevolutions, "\(riding)")
        #expect(riding["distance_m"] as? Double == expected.distanceM, "\(riding) vs \(expected)")
        #expect(riding["rolling_s"] as? Double == expected.rollingS, "\(riding) vs \(expected)")
        #expect(riding["cadence_avg_rpm"] as? Double == expected.cadenceAvg, "\(riding) vs \(expected)")
        #expect(abs((riding["cadence_max_rpm"] as? Double ?? 0) - 85) <= 0.5, "\(riding)")
    }

    @Test("the selection/date reply (mosquitto_rr) carries the same riding as health/today", arguments: Arrival.allCases)
    func replySameAsToday(_ arrival: Arrival) async throws {
        let (_, observed) = try await Self.observed(arrival)
        let today = try #require(observed.todayRiding, "\(observed.today)")
        let reply = try #require(observed.replyRiding, "\(observed.reply)")
        #expect(NSDictionary(dictionary: today).isEqual(to: reply), "\(arrival): health/today \(today), reply \(reply)")
    }

    @Test("one backlog, streamed live, in reversed order or sent again by the bridge's restarts: the same riding, every notification stored once")
    func arrivalIndependence() async throws {
        let (ride, reference) = try await Self.observed(.backlog)
        let expected = try #require(reference.todayRiding)
        for arrival in Arrival.allCases {
            #expect(try await Self.observed(arrival).1.storedRows == Int64(ride.notifications.count), "\(arrival)")
        }
        for arrival in [Arrival.live, .reversed, .replayed] {
            let riding = try #require(try await Self.observed(arrival).1.todayRiding)
            #expect(NSDictionary(dictionary: riding).isEqual(to: expected), "\(arrival): \(riding), one backlog: \(expected)")
        }
    }

    @Test("Home Assistant discovery announces the riding distance and cadence, reading health/today")
    func discovery() async throws {
        let (_, observed) = try await Self.observed(.backlog)
        let node = "keepalive_ride0"
        let distance = Observed.object(observed.discovery["homeassistant/sensor/\(node)/riding_distance_today/config"] ?? "")
        #expect(distance["state_topic"] as? String == "keepalive/ride0/health/today", "\(observed.discovery)")
        #expect(distance["unit_of_measurement"] as? String == "m" && distance["device_class"] as? String == "distance", "\(distance)")
        #expect((distance["value_template"] as? String)?.contains("riding") == true, "\(distance)")
        let cadence = Observed.object(observed.discovery["homeassistant/sensor/\(node)/riding_cadence_today/config"] ?? "")
        #expect(cadence["unit_of_measurement"] as? String == "rpm" && cadence["state_topic"] as? String == "keepalive/ride0/health/today")
        #expect((cadence["value_template"] as? String)?.contains("cadence_avg_rpm") == true, "\(cadence)")
    }
}
