import Foundation
import Testing
import TestKit

/// Workouts through the real parts: a 20-minute run at 3 m/s around a 150 m loop as a receiver
/// reports it (NMEA with checksums, generated: the gpsd captures in Tests/Fixtures never move
/// far), played by gpsfake into a real gpsd; heart rate at the same times from a `command`
/// bridge process (synthesised notifications); a stock mosquitto; shoes registered with the
/// `keepalive gear` command line; the exports read by xmllint (TCX's XSD) and gpxpy.
@Suite("Workouts end to end")
struct WorkoutEndToEndTests {
    @Test("a run through gpsd and a bridge: one workout within 2 % of the track's length and 30 s of its start and end, credited to the selected shoes (limit announced), listed, queried, exported as valid TCX and GPX; the whole day replayed after a restart changes nothing")
    func runThroughGPSD() async throws {
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
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/#")
        let last = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/workout/last")
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let gpsPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gpsPort, extraConfig: BridgeBacklog.commandBridge(catting: heartRateFile),
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        try await status.waitFor(timeout: 30, "the agent online") { $0.payload.contains("\"online\"") }
        // Shoes first, through the agent (its command topic), as a user would.
        let added = try await cli(agent, ["gear", "add", "--name", "Pegasus 41", "--limit-km", "3"])
        #expect(added.status == 0 && added.text.contains(#""id":"pegasus-41""#), "\(added.text)")
        let selected = try await cli(agent, ["gear", "select", "pegasus-41"])
        #expect(selected.status == 0, "\(selected.text)")

        var gps = try await GPSFake(capture: track, port: gpsPort, cycle: 0.005, once: true, linger: 2)
        defer { gps.stop() }
        let finished = try await events.waitFor(timeout: 150, "event/workout finished") {
            $0.topic.hasSuffix("/event/workout") && $0.json?["op"] as? String == "finished"
        }
        let id = try #require(finished.json?["id"] as? String)
        let record = try #require(try await last.waitFor(timeout: 10, "workout/last") { $0.json?["id"] as? String == id }.json)
        let distance = try #require(record["distance_m"] as? Double)
        #expect(abs(distance - 3600) / 3600 < 0.02, "distance \(distance) m against the loop's 3600 m")
        let formatter = ISO8601DateFormatter()
        let recordStart = try #require(formatter.date(from: record["start"] as? String ?? ""))
        let recordEnd = try #require(formatter.date(from: record["end"] as? String ?? ""))
        #expect(abs(recordStart.timeIntervalSince(runStart)) <= 30, "start \(recordStart) vs \(runStart)")
        #expect(abs(recordEnd.timeIntervalSince(runEnd)) <= 30, "end \(recordEnd) vs \(runEnd)")
        #expect(record["sport"] as? String == "run" && record["version"] as? Int == 1 && record["source"] as? String == "auto")
        #expect((record["hr"] as? [String: Any])?["max"] as? Int == 150)
        let started = events.messages.filter { $0.json?["op"] as? String == "started" }
        #expect(started.count == 1 && started.first?.json?["id"] as? String == id)

        // Credited to the selected pair; 3.6 km on a 3 km limit: 80 % and 100 % announced.
        let credited = try await events.waitFor(timeout: 10, "event/gear credited") { $0.json?["op"] as? String == "credited" }
        #expect(credited.json?["gear"] as? String == "pegasus-41" && credited.json?["workout"] as? String == id)
        let limits = try await events.waitFor(count: 2, timeout: 10, "event/gear limit 80 and 100") { $0.json?["op"] as? String == "limit" }
        #expect(limits.compactMap { $0.json?["percent"] as? Int } == [80, 100])

        // Listed, queried (with the day's totals), exported.
        let day = String(record["start"] as? String ?? "").prefix(10)
        let listed = try await cli(agent, ["workouts", "--from", String(day), "--to", String(day)])
        #expect(listed.status == 0 && listed.text.split(separator: "\n").filter { $0.contains(id) }.count == 1, "\(listed.text)")
        let reply = try #require(try await agent.queryReply([String(day), "--include", "health", "workouts"]))
        #expect((reply["workouts"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
        #expect(((reply["health"] as? [String: Any])?["workouts"] as? [String: Any])?["count"] as? Int == 1)
        let tcx = directory.file("run.tcx"), gpx = directory.file("run.gpx")
        #expect(try await cli(agent, ["export", "--workout", id, "--format", "tcx", "--output", tcx]).status == 0)
        #expect(try await cli(agent, ["export", "--workout", id, "--format", "gpx", "--output", gpx]).status == 0)
        let validation = try await ExportConsumers.validate(tcx, schema: "TrainingCenterDatabasev2.xsd")
        #expect(validation.status == 0, "\(validation.text)")
        let read = try await ExportConsumers.gpxpy(gpx)
        #expect(abs(read.length2d - distance) / distance < 0.02, "gpxpy's length \(read.length2d) m, the record's \(distance) m")
        #expect(!read.hr.isEmpty)

        // The agent restarts and everything is delivered again (the bridge's memory, the track):
        // nothing new is stored, the record and the credit stay as they were.
        gps.stop()
        agent.stop()
        try agent.start()
        gps = try await GPSFake(capture: track, port: gpsPort, cycle: 0.005, once: true, linger: 2)
        try await Wait.until(timeout: 120, "the replayed track to end (gpsfake exits after it)") { !gps.process.isRunning }
        let before = events.messages.count
        // Nothing is expected: give the service three polls (5 s each) to show anything it would.
        try await Task.sleep(for: .seconds(16))
        let after = events.messages.dropFirst(before).filter { $0.topic.contains("workout") || $0.topic.contains("gear") }
        #expect(after.isEmpty, "after the replay: \(after)")
        let gear = try await cli(agent, ["gear", "list"])
        #expect(gear.text.contains(#""runs":1"#), "\(gear.text)")
    }

    @Test("the agent is killed (SIGKILL) in the middle of a run and started again: one workout, with the id it was announced under")
    func killedMidRun() async throws {
        let directory = try TemporaryDirectory("workout-kill")
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 7200).rounded(.down))
        let runStart = start.addingTimeInterval(180)
        let run = NMEALog.loop(start: runStart, seconds: 1200, speedMps: 3)
        // Before the kill: standing, then 12 minutes of the run; after: the rest, from 5 minutes
        // back (gpsfake plays at once, and the restarted agent reaches gpsd a moment later: what it
        // misses then it has already stored).
        let before = try directory.write("before.nmea", NMEALog.text(NMEALog.standing(start: start, seconds: 180) + run.prefix(720)))
        let after = try directory.write(
            "after.nmea", NMEALog.text(Array(run.dropFirst(420)) + NMEALog.standing(start: runStart.addingTimeInterval(1200), seconds: 420)))
        let heartRate = (0..<1800).map { index in
            let ms = start.unixMs + Int64(index) * 1000
            let bpm = index < 180 ? 70 : index < 1380 ? 145 : 100
            return #"{"ts":"\#(BridgeBacklog.timestamp(ms))","sensor":"strap","raw":"\#(String(format: "06%02x", bpm))"}"#
        }
        let heartRateFile = try directory.write("hr.ndjson", heartRate.joined(separator: "\n") + "\n")

        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/workout")
        let gpsPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gpsPort, extraConfig: BridgeBacklog.commandBridge(catting: heartRateFile),
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        var gps = try await GPSFake(capture: before, port: gpsPort, cycle: 0.005, once: true, linger: 2)
        defer { gps.stop() }
        let started: MQTTSubscriber.Message
        do {
            started = try await events.waitFor(timeout: 120, "event/workout started") { $0.json?["op"] as? String == "started" }
        } catch {
            let log = agent.log.split(separator: "\n").suffix(40)
            Issue.record("\(error); gpsfake: \(gps.process.text.suffix(1500)) running \(gps.process.isRunning); the agent logged:\n\(log.joined(separator: "\n"))")
            throw error
        }
        let id = try #require(started.json?["id"] as? String)
        // The kill comes once the first part is stored (gpsd keeps nothing for a client that is
        // gone: what it sends meanwhile is lost on a real Pi too, and would only shorten the run).
        let day = String(BridgeBacklog.timestamp(runStart.unixMs).prefix(10))
        try await Wait.until(timeout: 60, "the first part played (gpsfake exits after it)") { !gps.process.isRunning }
        let deadline = Date().addingTimeInterval(30)
        var fixes = [-2, -1]
        while fixes.suffix(2)[fixes.count - 2] != fixes.last {  // two looks 1 s apart agree: all committed
            try #require(Date() < deadline, "the stored fixes did not settle: \(fixes)")
            try await Task.sleep(for: .seconds(1))
            let reply = try await agent.queryReply([day])
            fixes.append(((reply?["health"] as? [String: Any])?["location"] as? [String: Any])?["fixes"] as? Int ?? 0)
        }
        agent.kill9()
        gps.stop()

        try agent.start()
        gps = try await GPSFake(capture: after, port: gpsPort, cycle: 0.005, once: true, linger: 2)
        let finished = try await events.waitFor(timeout: 120, "event/workout finished") { $0.json?["op"] as? String == "finished" }
        #expect(finished.json?["id"] as? String == id, "finished \(finished), announced \(id)")
        // At-least-once: a kill between announcing and recording may announce again, never under another id.
        let ids = Set(events.messages.compactMap { $0.json?["id"] as? String })
        #expect(ids == [id], "\(events.messages)")
        let reply = try #require(try await agent.queryReply([day, "--include", "workouts", "health"]))
        let workouts = try #require(reply["workouts"] as? [[String: Any]])
        #expect(workouts.count == 1 && workouts.first?["id"] as? String == id)
        let distance = workouts.first?["distance_m"] as? Double ?? 0
        #expect(abs(distance - 3600) / 3600 < 0.02, "the whole run, both sides of the kill: \(distance) m; events \(events.messages.map(\.payload)); \(workouts); \(agent.log.split(separator: "\n").filter { $0.contains("workout") || $0.contains("gps") }.suffix(20).joined(separator: "\n"))")
    }

    @Test("keepalive workout start|stop through the running agent; a stop with nothing started is refused; a reply topic outside the allow-list is refused")
    func manualByCommandLine() async throws {
        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/workout")
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[query]\nreply_topics = [\"reply/#\"]\n", environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        try await status.waitFor(timeout: 30, "the agent online") { $0.payload.contains("\"online\"") }
        let started = try await cli(agent, ["workout", "start", "--sport", "walk"])
        #expect(started.status == 0 && started.text.contains(#""ok":true"#), "\(started.text)")
        let again = try await cli(agent, ["workout", "start"])
        #expect(again.status == 1 && again.text.contains("already"), "\(again.text)")
        let stopped = try await cli(agent, ["workout", "stop"])
        #expect(stopped.status == 0 && stopped.text.contains(#""sport":"walk""#) && stopped.text.contains(#""source":"manual""#), "\(stopped.text)")
        let none = try await cli(agent, ["workout", "stop"])
        #expect(none.status == 1, "\(none.text)")
        try await events.waitFor(timeout: 10, "finished") { $0.json?["op"] as? String == "finished" }

        // Hostile: a reply into the agent's own tree, and a gear id that would name a topic.
        let replies = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/cmd/result")
        let rr = try await ExportConsumers.run(
            "mosquitto_rr", Tools.find("mosquitto_rr"),
            ["-p", "\(broker.port)", "-t", "keepalive/testpi/cmd/gear", "-e", "keepalive/testpi/status", "-m", #"{"op":"list"}"#, "-W", "3"],
            timeout: 10)
        _ = rr
        let refused = try await replies.waitFor(timeout: 10, "a refusal on the fallback topic") { $0.userProperties.contains("403") }
        #expect(refused.payload.contains("forbidden_topic"))
        let badID = try await ExportConsumers.run(
            "mosquitto_rr", Tools.find("mosquitto_rr"),
            ["-p", "\(broker.port)", "-t", "keepalive/testpi/cmd/gear", "-e", "reply/test", "-m", #"{"op":"add","id":"a/#","name":"x"}"#, "-W", "5"],
            timeout: 10)
        #expect(badID.text.contains("bad_request"), "\(badID.text)")
    }

    private func cli(_ agent: AgentProcess, _ arguments: [String]) async throws -> (status: Int32, text: String) {
        try await ExportConsumers.run("keepalive \(arguments.first ?? "")", Tools.agent, arguments + ["--config", agent.configPath], timeout: 30)
    }
}
