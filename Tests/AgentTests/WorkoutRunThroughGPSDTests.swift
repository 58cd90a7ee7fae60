import Foundation
import Testing
import TestKit

/// A 20-minute run at 3 m/s around a 150 m loop as a receiver reports it (NMEA with checksums,
/// generated), played by gpsfake into a real gpsd; heart rate at the same times from a `command`
/// bridge process (synthesised notifications); a stock mosquitto; shoes registered with the
/// `keepalive gear` command line; the exports read by xmllint (TCX's XSD) and gpxpy. The run is
/// played once, then the whole day again after a restart; each test states one claim on what
/// was seen. The agent, gpsfake and the broker are stopped before the outcome is handed out.
@Suite("Workouts end to end: a run through gpsd", .serialized)
struct WorkoutRunThroughGPSDTests {
    typealias Run = (status: Int32, text: String)

    struct Outcome: Sendable {
        let runStart: Date
        let runEnd: Date
        let addedShoes: Run
        let selectedShoes: Run
        let id: String
        /// workout/last, as published.
        let record: String
        let startedEvents: [MQTTSubscriber.Message]
        let credited: Result<MQTTSubscriber.Message, any Error>
        let limits: Result<[MQTTSubscriber.Message], any Error>
        let listed: Run
        /// The day's query reply with health and workouts, as JSON.
        let reply: Result<String, any Error>
        let tcxExport: Int32
        let gpxExport: Int32
        let tcxValidation: Result<Run, any Error>
        let gpxRead: Result<(length2d: Double, heartRates: Int), any Error>
        let eventsAfterReplay: Result<[MQTTSubscriber.Message], any Error>
        let gearAfterReplay: Result<Run, any Error>
    }

    static let outcome = Task { try await scenario() }

    static func cli(_ agent: AgentProcess, _ arguments: [String]) async throws -> Run {
        try await ExportConsumers.run("keepalive \(arguments.first ?? "")", Tools.agent, arguments + ["--config", agent.configPath], timeout: 30)
    }

    static func scenario() async throws -> Outcome {
        let directory = try TemporaryDirectory("workout-e2e")
        // Two hours ago, on whole seconds: 3 minutes standing, 20 running, 7 standing (so the run
        // ends in the data itself: 5 minutes without moving).
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 7200).rounded(.down))
        let runStart = start.addingTimeInterval(180)
        let runEnd = runStart.addingTimeInterval(1200)
        let points = NMEALog.standing(start: start, seconds: 180) + NMEALog.loop(start: runStart, seconds: 1200, speedMps: 3)
            + NMEALog.standing(start: runEnd, seconds: 420)
        let track = try directory.write("run.nmea", NMEALog.text(points))
        let heartRate = points.enumerated().map { index, point in
            let bpm = index < 180 ? 70 : index < 1380 ? min(150, 70 + (index - 180) / 2) : 100
            let ms = point.time.unixMs
            return #"{"ts":"\#(BridgeBacklog.timestamp(ms))","sensor":"strap","raw":"\#(String(format: "06%02x", bpm))"}"#
        }
        let heartRateFile = try directory.write("hr.ndjson", heartRate.joined(separator: "\n") + "\n")

        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/#")
        let last = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/workout/last")
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        defer { events.stop(); last.stop(); status.stop() }
        let gpsPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gpsPort, extraConfig: BridgeBacklog.commandBridge(catting: heartRateFile),
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        try await status.waitFor(timeout: 30, "the agent online") { $0.payload.contains("\"online\"") }
        // Shoes first, through the agent (its command topic), as a user would.
        let added = try await cli(agent, ["gear", "add", "--name", "Pegasus 41", "--limit-km", "3"])
        let selected = try await cli(agent, ["gear", "select", "pegasus-41"])

        var gps = try await GPSFake(capture: track, port: gpsPort, cycle: 0.005, once: true, linger: 10)
        defer { gps.stop() }
        let finished = try await events.waitFor(timeout: 150, "event/workout finished") {
            $0.topic.hasSuffix("/event/workout") && $0.json?["op"] as? String == "finished"
        }
        let id = try #require(finished.json?["id"] as? String)
        let record = try await last.waitFor(timeout: 10, "workout/last") { $0.json?["id"] as? String == id }
        let started = events.messages.filter { $0.json?["op"] as? String == "started" }

        // Credited to the selected pair; 3.6 km on a 3 km limit: 80 % and 100 % announced.
        let credited = await captured { try await events.waitFor(timeout: 10, "event/gear credited") { $0.json?["op"] as? String == "credited" } }
        let limits = await captured {
            try await events.waitFor(count: 2, timeout: 10, "event/gear limit 80 and 100") { $0.json?["op"] as? String == "limit" }
        }

        // Listed, queried (with the day's totals), exported.
        let day = String(record.json?["start"] as? String ?? "").prefix(10)
        let listed = try await cli(agent, ["workouts", "--from", String(day), "--to", String(day)])
        let reply = await captured {
            let object = try #require(try await agent.queryReply([String(day), "--include", "health", "workouts"]))
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let tcx = directory.file("run.tcx"), gpx = directory.file("run.gpx")
        let tcxExport = try await cli(agent, ["export", "--workout", id, "--format", "tcx", "--output", tcx]).status
        let gpxExport = try await cli(agent, ["export", "--workout", id, "--format", "gpx", "--output", gpx]).status
        let validation = await captured { try await ExportConsumers.validate(tcx, schema: "TrainingCenterDatabasev2.xsd") }
        let read = await captured {
            let report = try await ExportConsumers.gpxpy(gpx)
            return (length2d: report.length2d, heartRates: report.hr.count)
        }

        // The agent restarts and everything is delivered again (the bridge's memory, the track):
        // nothing new is stored, the record and the credit stay as they were.
        gps.stop()
        agent.stop()
        try agent.start()
        gps = try await GPSFake(capture: track, port: gpsPort, cycle: 0.005, once: true, linger: 10)
        let replayed = await captured {
            try await Wait.until(timeout: 120, "the replayed track to end (gpsfake exits after it)") { !gps.process.isRunning }
            let before = events.messages.count
            // Nothing is expected: give the service three polls (5 s each) to show anything it would.
            try await Task.sleep(for: .seconds(16))
            return Array(events.messages.dropFirst(before).filter { $0.topic.contains("workout") || $0.topic.contains("gear") })
        }
        let gear = await captured { try await cli(agent, ["gear", "list"]) }
        return Outcome(
            runStart: runStart, runEnd: runEnd, addedShoes: added, selectedShoes: selected, id: id, record: record.payload,
            startedEvents: started, credited: credited, limits: limits, listed: listed, reply: reply, tcxExport: tcxExport,
            gpxExport: gpxExport, tcxValidation: validation, gpxRead: read, eventsAfterReplay: replayed, gearAfterReplay: gear)
    }

    static func record() async throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try await outcome.value.record.utf8)) as? [String: Any])
    }

    @Test("a run through gpsd and a bridge: one workout within 2 % of the track's length")
    func runThroughGPSD() async throws {
        let outcome = try await Self.outcome.value
        let record = try await Self.record()
        let distance = try #require(record["distance_m"] as? Double)
        #expect(abs(distance - 3600) / 3600 < 0.02, "distance \(distance) m against the loop's 3600 m")
        #expect(record["sport"] as? String == "run" && record["version"] as? Int == 1 && record["source"] as? String == "auto")
        #expect((record["hr"] as? [String: Any])?["max"] as? Int == 150)
        #expect(outcome.startedEvents.count == 1 && outcome.startedEvents.first?.json?["id"] as? String == outcome.id)
    }

    @Test("a run through gpsd and a bridge: the workout starts and ends within 30 s of the run")
    func startAndEnd() async throws {
        let outcome = try await Self.outcome.value
        let record = try await Self.record()
        let formatter = ISO8601DateFormatter()
        let recordStart = try #require(formatter.date(from: record["start"] as? String ?? ""))
        let recordEnd = try #require(formatter.date(from: record["end"] as? String ?? ""))
        #expect(abs(recordStart.timeIntervalSince(outcome.runStart)) <= 30, "start \(recordStart) vs \(outcome.runStart)")
        #expect(abs(recordEnd.timeIntervalSince(outcome.runEnd)) <= 30, "end \(recordEnd) vs \(outcome.runEnd)")
    }

    @Test("the run is credited to the shoes selected with `keepalive gear`, their limit announced")
    func creditedToSelectedShoes() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.addedShoes.status == 0 && outcome.addedShoes.text.contains(#""id":"pegasus-41""#), "\(outcome.addedShoes.text)")
        #expect(outcome.selectedShoes.status == 0, "\(outcome.selectedShoes.text)")
        let credited = try outcome.credited.get()
        #expect(credited.json?["gear"] as? String == "pegasus-41" && credited.json?["workout"] as? String == outcome.id)
        #expect(try outcome.limits.get().compactMap { $0.json?["percent"] as? Int } == [80, 100])
    }

    @Test("the run is listed by `keepalive workouts`")
    func listed() async throws {
        let outcome = try await Self.outcome.value
        let listed = outcome.listed
        #expect(listed.status == 0 && listed.text.split(separator: "\n").filter { $0.contains(outcome.id) }.count == 1, "\(listed.text)")
    }

    @Test("the run is in the day's query reply, with the day's workout totals")
    func queried() async throws {
        let outcome = try await Self.outcome.value
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(try outcome.reply.get().utf8)) as? [String: Any])
        #expect((reply["workouts"] as? [[String: Any]])?.map { $0["id"] as? String } == [outcome.id])
        #expect(((reply["health"] as? [String: Any])?["workouts"] as? [String: Any])?["count"] as? Int == 1)
    }

    @Test("the run is exported as TCX valid against Garmin's schema")
    func exportedAsTCX() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.tcxExport == 0)
        let validation = try outcome.tcxValidation.get()
        #expect(validation.status == 0, "\(validation.text)")
    }

    @Test("the run is exported as GPX that gpxpy reads with its length and heart rate")
    func exportedAsGPX() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.gpxExport == 0)
        let distance = try #require(try await Self.record()["distance_m"] as? Double)
        let read = try outcome.gpxRead.get()
        #expect(abs(read.length2d - distance) / distance < 0.02, "gpxpy's length \(read.length2d) m, the record's \(distance) m")
        #expect(read.heartRates > 0)
    }

    @Test("the whole day replayed after a restart changes nothing")
    func replayChangesNothing() async throws {
        let outcome = try await Self.outcome.value
        let after = try outcome.eventsAfterReplay.get()
        #expect(after.isEmpty, "after the replay: \(after)")
        let gear = try outcome.gearAfterReplay.get()
        #expect(gear.text.contains(#""runs":1"#), "\(gear.text)")
    }
}
