import Foundation
import Testing
import TestKit

/// Workouts through the real parts: a run as a receiver reports it (NMEA with checksums,
/// generated: the gpsd captures in Tests/Fixtures never move far), played by gpsfake into a real
/// gpsd; heart rate at the same times from a `command` bridge process (synthesised
/// notifications); a stock mosquitto. The whole run with shoes and exports is
/// WorkoutRunThroughGPSDTests; here the agent killed mid-run, and workouts by command.
@Suite("Workouts end to end")
struct WorkoutEndToEndTests {
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
        var gps = try await GPSFake(capture: before, port: gpsPort, cycle: 0.005, once: true, linger: 10)
        defer { gps.stop() }
        let started = try await agent.explainingFailure(gps: gps) {
            try await events.waitFor(timeout: 120, "event/workout started") { $0.json?["op"] as? String == "started" }
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
        gps = try await GPSFake(capture: after, port: gpsPort, cycle: 0.005, once: true, linger: 10)
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

    /// `keepalive workout` and hostile requests against one running agent, once, for the three
    /// claims below; the agent and the broker are stopped before the outcome is handed out.
    struct ByCommand: Sendable {
        let started: Run
        let startedAgain: Run
        let stopped: Run
        let stoppedWithNothingStarted: Run
        let finished: Result<MQTTSubscriber.Message, any Error>
        let refused: Result<MQTTSubscriber.Message, any Error>
        let badID: Run
    }

    typealias Run = (status: Int32, text: String)

    static let byCommand = Task { () async throws -> ByCommand in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/workout")
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        defer { events.stop(); status.stop() }
        let agent = try AgentProcess(
            brokerPort: broker.port, extraConfig: "[query]\nreply_topics = [\"reply/#\"]\n", environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        try await status.waitFor(timeout: 30, "the agent online") { $0.payload.contains("\"online\"") }
        let started = try await cli(agent, ["workout", "start", "--sport", "walk"])
        let again = try await cli(agent, ["workout", "start"])
        let stopped = try await cli(agent, ["workout", "stop"])
        let none = try await cli(agent, ["workout", "stop"])
        let finished = await captured { try await events.waitFor(timeout: 10, "finished") { $0.json?["op"] as? String == "finished" } }

        // Hostile: a reply into the agent's own tree, and a gear id that would name a topic.
        let replies = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/cmd/result")
        defer { replies.stop() }
        let rr = try await ExportConsumers.run(
            "mosquitto_rr", Tools.find("mosquitto_rr"),
            ["-p", "\(broker.port)", "-t", "keepalive/testpi/cmd/gear", "-e", "keepalive/testpi/status", "-m", #"{"op":"list"}"#, "-W", "3"],
            timeout: 10)
        _ = rr
        let refused = await captured {
            try await replies.waitFor(timeout: 10, "a refusal on the fallback topic") { $0.userProperties.contains("403") }
        }
        let badID = try await ExportConsumers.run(
            "mosquitto_rr", Tools.find("mosquitto_rr"),
            ["-p", "\(broker.port)", "-t", "keepalive/testpi/cmd/gear", "-e", "reply/test", "-m", #"{"op":"add","id":"a/#","name":"x"}"#, "-W", "5"],
            timeout: 10)
        return ByCommand(
            started: started, startedAgain: again, stopped: stopped, stoppedWithNothingStarted: none, finished: finished, refused: refused,
            badID: badID)
    }

    @Test("keepalive workout start|stop works through the running agent")
    func manualByCommandLine() async throws {
        let outcome = try await Self.byCommand.value
        let (started, again, stopped) = (outcome.started, outcome.startedAgain, outcome.stopped)
        #expect(started.status == 0 && started.text.contains(#""ok":true"#), "\(started.text)")
        #expect(again.status == 1 && again.text.contains("already"), "\(again.text)")
        #expect(stopped.status == 0 && stopped.text.contains(#""sport":"walk""#) && stopped.text.contains(#""source":"manual""#), "\(stopped.text)")
        _ = try outcome.finished.get()
    }

    @Test("keepalive workout stop with nothing started is refused")
    func stopWithNothingStarted() async throws {
        let none = try await Self.byCommand.value.stoppedWithNothingStarted
        #expect(none.status == 1, "\(none.text)")
    }

    @Test("a command whose reply topic is outside the allow-list is refused on the fallback topic")
    func replyTopicRefused() async throws {
        #expect(try await Self.byCommand.value.refused.get().payload.contains("forbidden_topic"))
    }

    @Test("a gear id that would name a topic is refused as a bad request")
    func topicLikeGearIDRefused() async throws {
        let badID = try await Self.byCommand.value.badID
        #expect(badID.text.contains("bad_request"), "\(badID.text)")
    }

    static func cli(_ agent: AgentProcess, _ arguments: [String]) async throws -> (status: Int32, text: String) {
        try await ExportConsumers.run("keepalive \(arguments.first ?? "")", Tools.agent, arguments + ["--config", agent.configPath], timeout: 30)
    }
}
