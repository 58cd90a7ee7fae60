import Foundation
import FoundationXML
import Logging
import Testing
import TestKit

@testable import Agent
@testable import Bus
@testable import Store

/// Per-date queries over a real broker with real MQTT clients, and the same answers from the
/// command line.
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
            let lines = try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n")
                .map { $0.replacingOccurrences(of: "\"ts\":\"2026-11-21T", with: "\"ts\":\"\(day)T") }
            let heartRates = try lines.compactMap {
                HeartRateService.stored(try BridgeMessage.parse(Array($0.utf8)).get(), received: Date(), synchronised: true)
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

    @Test("mosquitto_rr gets the day's health and location; `keepalive query` prints exactly the same reply")
    func requestResponse() async throws {
        let setup = try await Setup.make()
        let text = try await setup.request("\(setup.day)", extra: ["-D", "publish", "correlation-data", "r1"])
        let reply = Self.object(text)
        #expect(reply["ok"] as? Bool == true, "\(text)")
        #expect(reply["date"] as? String == setup.day.description)
        #expect(reply["tz"] as? String == "UTC")
        #expect(reply["has_data"] as? Bool == true)
        let health = try #require(reply["health"] as? [String: Any])
        #expect((health["heart_rate"] as? [String: Any])?["samples"] as? Int == setup.heartRates.count)
        #expect((health["location"] as? [String: Any])?["fixes"] as? Int == 3600)
        let distance = (health["location"] as? [String: Any])?["distance_m"] as? Double ?? 0
        #expect(abs(distance - 3599 * 1.4) < 3599 * 1.4 * 0.02, "a straight 5 km walk measured \(distance) m")
        let location = try #require(reply["location"] as? [String: Any])
        #expect(location["fixes"] as? Int == 3600)
        #expect((location["first"] as? [String: Any])?["tst"] as? Int == Int(setup.fixes[0].timeMs / 1000))
        #expect((location["last"] as? [String: Any])?["tst"] as? Int == Int(setup.fixes[3599].timeMs / 1000))
        #expect(reply["track"] == nil && reply["hr"] == nil, "only what was asked for")

        // The finished day's aggregate keeps its first and last fix: the same reply from that one
        // row, and still after the raw fixes are pruned.
        let storePath = setup.agent.storePath
        try await Wait.until(timeout: 20, "the day's final aggregate with its first and last fix") {
            let db = try SQLiteConnection(path: storePath, readOnly: true)
            return try db.dayAggregate(date: setup.day.description)?.lastFix != nil
        }
        let fromAggregate = Self.object(try await setup.request("\(setup.day)"))
        #expect(fromAggregate["location"] as? NSDictionary == location as NSDictionary)

        // A day without data is still ok.
        let empty = Self.object(try await setup.request("\(setup.day.previous)"))
        #expect(empty["ok"] as? Bool == true && empty["has_data"] as? Bool == false)

        // With track and hr: 5-minute points and per-minute heart rate.
        let full = Self.object(try await setup.request(#"{"date":"\#(setup.day)","include":["health","location","track","hr"]}"#))
        #expect((full["track"] as? [[String: Any]])?.count == 12)
        #expect((full["track"] as? [[String: Any]])?.first?["alt"] as? Int == 35)
        #expect((full["hr"] as? [[String: Any]])?.count == 60)
        let everyFix = Self.object(try await setup.request(#"{"date":"\#(setup.day)","include":["track"],"track":"full"}"#))
        #expect((everyFix["track"] as? [[String: Any]])?.count == 3600)

        // The command line, while the agent runs, prints the bytes the requester got.
        let cli = try await setup.query(["query", "\(setup.day)"])
        #expect(cli.status == 0, "\(cli.errors)")
        #expect(cli.output == text + "\n")
        let future = try await setup.query(["query", "\(LocalDay(containing: Date(), timeZone: Self.utc).next)"])
        #expect(future.status == 1)
        #expect(Self.object(future.output)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } == "future_date")

        do {
            let db = try SQLiteConnection(path: storePath)
            try db.execute("DELETE FROM fix")  // as retention prunes raw rows
        }
        let pruned = Self.object(try await setup.request("\(setup.day)"))
        #expect(pruned["location"] as? NSDictionary == location as NSDictionary, "\(pruned)")
        #expect(setup.agent.stop() == 0)
    }

    @Test("correlation data echoed byte for byte (binary too), status and content type set; no response topic → the fallback topic; a v3.1.1 requester's reply_to")
    func routing() async throws {
        let setup = try await Setup.make()
        let replies = try await MQTTSubscriber(port: setup.broker.port, filter: "#")

        // Binary correlation data through our own client: NUL, 0xFF, a newline.
        let requester = MQTTClient(
            options: MQTTClientOptions(host: "127.0.0.1", port: setup.broker.port, clientID: "requester", reconnectMinS: 0.1, reconnectMaxS: 0.5),
            logger: Logger(label: "requester"))
        let received = MessageLog(requester)
        requester.subscribe("reply/bin")
        requester.start()
        defer { requester.stop() }
        try await Wait.until(timeout: 10, "the requester connected") { requester.connectionState == .connected }
        let correlation: [UInt8] = [0x00, 0xFF, 0x0A, 0x80, 0x7F, 0x01]
        // Sent again every half second until the reply comes (our subscription may not be in yet).
        var lastSent = Date.distantPast
        try await Wait.until(timeout: 20, "the binary-correlated reply") {
            if received.messages.isEmpty && Date().timeIntervalSince(lastSent) > 0.5 {
                lastSent = Date()
                _ = try? requester.publish(MQTTMessage(
                    topic: setup.topic, payload: Array("\(setup.day)".utf8),
                    properties: MQTTProperties(responseTopic: "reply/bin", correlationData: correlation)))
            }
            return !received.messages.isEmpty
        }
        let binary = try #require(received.messages.first)
        #expect(binary.properties.correlationData == correlation)
        #expect(binary.properties.contentType == "application/json")
        #expect(binary.properties.userProperties.contains { $0 == ("status", "200") })

        // Printable correlation data and the status property as mosquitto_sub shows them.
        try await MQTTTools.publish(
            port: setup.broker.port, topic: setup.topic, message: "\(setup.day)",
            extraArguments: ["-D", "publish", "response-topic", "reply/printable", "-D", "publish", "correlation-data", "abc-123"])
        let printable = try await replies.waitFor("the reply on reply/printable") { $0.topic == "reply/printable" }
        #expect(printable.correlationData == "abc-123")
        #expect(printable.userProperties == "status:200")

        // No response topic, no reply_to: the fallback topic.
        try await MQTTTools.publish(port: setup.broker.port, topic: setup.topic, message: "\(setup.day)")
        let fallback = try await replies.waitFor("a reply on selection/result") { $0.topic == "keepalive/testpi/selection/result" }
        #expect(Self.object(fallback.payload)["ok"] as? Bool == true)

        // MQTT 3.1.1 has no response topic: reply_to in the request.
        try await MQTTTools.publish(
            port: setup.broker.port, topic: setup.topic, message: #"{"date":"\#(setup.day)","reply_to":"reply/v3"}"#,
            extraArguments: ["-V", "311"])
        let v3 = try await replies.waitFor("the reply on reply/v3") { $0.topic == "reply/v3" }
        #expect(Self.object(v3.payload)["has_data"] as? Bool == true)
        #expect(setup.agent.stop() == 0)
    }

    @Test("every error is one reply with its code and status; a forbidden response topic is answered on the fallback topic")
    func errors() async throws {
        let setup = try await Setup.make(extraConfig: "[hr]\ntransport = \"none\"\n[query]\nmax_reply_bytes = 20000\n")
        let replies = try await MQTTSubscriber(port: setup.broker.port, filter: "#")
        let tomorrow = LocalDay(containing: Date(), timeZone: Self.utc).next
        let cases: [(String, String, Int)] = [
            ("2026-13-45", "invalid_date", 400),
            ("yesterday", "invalid_date", 400),
            ("\(tomorrow)", "future_date", 400),
            ("{\"date\":", "bad_request", 400),
            (#"{"date":20261121}"#, "bad_request", 400),
            (#"{"date":"\#(setup.day)","include":["steps"]}"#, "bad_request", 400),
            (#"{"date":"\#(setup.day)","format":"kml"}"#, "bad_request", 400),
            (#"{"date":"\#(setup.day)","colour":"blue"}"#, "bad_request", 400),
            (String(repeating: "x", count: 70_000), "too_large", 413),
            (#"{"date":"\#(setup.day)","include":["track"],"track":"full"}"#, "too_large", 413),
        ]
        for (index, (request, code, status)) in cases.enumerated() {
            let topic = "reply/error/\(index)"
            try await MQTTTools.publish(
                port: setup.broker.port, topic: setup.topic, message: request, extraArguments: ["-D", "publish", "response-topic", topic])
            let reply = try await replies.waitFor("the \(code) reply to \(request.prefix(60))") { $0.topic == topic }
            let error = Self.object(reply.payload)["error"] as? [String: Any]
            #expect(error?["code"] as? String == code, "\(request.prefix(60)) → \(reply.payload)")
            #expect(reply.userProperties == "status:\(status)")
            let message = error?["message"] as? String ?? ""
            #expect(!message.isEmpty)
        }
        let tooLarge = replies.messages.first { $0.topic == "reply/error/\(cases.count - 1)" }
        #expect(tooLarge?.payload.contains("5min") == true, "the refusal says how to ask for less")

        // Forbidden response topics: the refusal goes to the fallback topic, never to them.
        for (index, request, extra) in [
            (0, "\(setup.day)", ["-D", "publish", "response-topic", "keepalive/testpi/location"]),
            (1, #"{"date":"\#(setup.day)","reply_to":"reply/+/x"}"#, []),
            (2, #"{"date":"\#(setup.day)","reply_to":"$SYS/broker/x"}"#, []),
            (3, #"{"date":"\#(setup.day)","reply_to":"keepalive/testpi/status"}"#, []),
        ] {
            try await MQTTTools.publish(
                port: setup.broker.port, topic: setup.topic, message: request,
                extraArguments: extra + ["-D", "publish", "correlation-data", "forbidden-\(index)"])
            let reply = try await replies.waitFor("the refusal \(index) on the fallback topic") {
                $0.topic == "keepalive/testpi/selection/result" && $0.correlationData == "forbidden-\(index)"
            }
            #expect((Self.object(reply.payload)["error"] as? [String: Any])?["code"] as? String == "forbidden_topic")
            #expect(reply.userProperties == "status:403")
        }
        // No reply went into the agent's own topics (a location slot published meanwhile is no reply).
        #expect(!replies.messages.contains {
            ($0.topic == "keepalive/testpi/location" || $0.topic == "keepalive/testpi/status") && $0.payload.contains("\"ok\"")
        })

        // internal: the command line on a store that does not exist.
        let missing = try await setup.query(["query", "\(setup.day)"].map { $0 })
        #expect(missing.status == 0)
        #expect(setup.agent.stop() == 0)
        try FileManager.default.removeItem(atPath: setup.agent.storePath)
        let internalError = try await setup.query(["query", "\(setup.day)"])
        #expect(internalError.status == 1)
        #expect((Self.object(internalError.output)["error"] as? [String: Any])?["code"] as? String == "internal")
    }

    @Test("GPX validates as XML and round-trips positions and heart rate; GeoJSON carries the track; export writes several days as GPX, GeoJSON and CSV")
    func formats() async throws {
        let setup = try await Setup.make()
        let gpx = try await setup.request(#"{"date":"\#(setup.day)","format":"gpx","track":"full"}"#, extra: ["-W", "20"])
        let document = try XMLDocument(data: Data(gpx.utf8), options: [])
        let root = try #require(document.rootElement())
        #expect(root.name == "gpx" && Self.attribute(root, "version") == "1.1")
        #expect(root.uri == "http://www.topografix.com/GPX/1/1")
        let points = try root.nodes(forXPath: "//*[local-name()='trkpt']").compactMap { $0 as? XMLElement }
        #expect(points.count == setup.fixes.count)
        let heartRates = Dictionary(setup.heartRates.map { ($0.timeMs, $0.bpm) }, uniquingKeysWith: { a, _ in a })
        var withHeartRate = 0
        for (point, fix) in zip(points, setup.fixes) {
            #expect(abs((Double(Self.attribute(point, "lat") ?? "") ?? 0) - fix.lat) < 1e-7)
            #expect(abs((Double(Self.attribute(point, "lon") ?? "") ?? 0) - fix.lon) < 1e-7)
            if let hr = try point.nodes(forXPath: ".//*[local-name()='hr']").first?.stringValue {
                withHeartRate += 1
                // The fixture's samples are on whole seconds, as the fixes are: the nearest is the same second.
                if let expected = heartRates[fix.timeMs] { #expect(Int(hr) == expected) }
            }
        }
        #expect(withHeartRate >= setup.heartRates.count - 1)

        let geojson = Self.object(try await setup.request(#"{"date":"\#(setup.day)","format":"geojson"}"#))
        #expect(geojson["type"] as? String == "FeatureCollection")
        let feature = try #require((geojson["features"] as? [[String: Any]])?.first)
        let geometry = try #require(feature["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        #expect((geometry["coordinates"] as? [[Double]])?.count == 12)
        #expect((geometry["coordinates"] as? [[Double]])?.first?[0] == 13.4, "GeoJSON is lon, lat")

        // Export: two days, the first empty; a progress line per day on stderr.
        let first = setup.day.previous
        for format in ["gpx", "geojson", "csv"] {
            let export = try await setup.query(["export", "--from", "\(first)", "--to", "\(setup.day)", "--format", format])
            #expect(export.status == 0, "\(export.errors)")
            #expect(export.errors.contains("exporting \(setup.day) (2/2 days"), "\(export.errors)")
            switch format {
            case "gpx":
                let exported = try XMLDocument(data: Data(export.output.utf8), options: [])
                #expect(try exported.nodes(forXPath: "//*[local-name()='trk']").count == 2)
                #expect(try exported.nodes(forXPath: "//*[local-name()='trkpt']").count == setup.fixes.count)
            case "geojson":
                #expect((Self.object(export.output)["features"] as? [Any])?.count == 2)
            default:
                let rows = export.output.split(separator: "\n")
                #expect(rows.first == "time,lat,lon,alt_m,speed_mps,hr_bpm")
                #expect(rows.count == 1 + setup.fixes.count + setup.heartRates.count)
            }
        }
        #expect(setup.agent.stop() == 0)
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
final class MessageLog: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [MQTTIncomingMessage] = []
    private var task: Task<Void, Never>?

    init(_ client: MQTTClient) {
        task = Task { [weak self] in
            for await event in client.events {
                if case .message(let message) = event { self?.lock.withLock { self?.received.append(message) } }
            }
        }
    }

    var messages: [MQTTIncomingMessage] { lock.withLock { received } }
}
