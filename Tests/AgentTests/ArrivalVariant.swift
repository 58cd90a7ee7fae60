import Foundation
import Testing
import TestKit

/// One way a recorded day reaches the agent (ArrivalIndependenceTests): how fast gpsfake plays
/// the fixes, when the strap's notifications come, whether the system clock is synchronised, and
/// whether the agent is restarted midway. Each runs a real agent, gpsd (gpsfake) and bridge
/// process of its own, on the suite's one broker under a device id of its own.
struct ArrivalVariant: Sendable, CustomStringConvertible {
    enum HeartRate: String, Sendable {
        /// The strap's memory in one go when the bridge starts, before any fix.
        case backlogBefore = "one backlog before the fixes"
        /// One notification at a time, at the pace the fixes are played.
        case live = "streamed live"
        /// The strap's memory in one go once every fix has been played.
        case backlogAfter = "one backlog after the fixes"
    }

    var speed: Double
    var heartRate: HeartRate
    var synchronised: Bool
    var restartMidway = false
    /// `[store] fold_s`: the product's 60 hands the workout service the rows a minute at a time
    /// (50 minutes of a 50× replay at once); the suite's usual 1 nearly as they come.
    var foldS = 1

    var description: String {
        "\(Int(speed))×, heart rate \(heartRate.rawValue), clock \(synchronised ? "synchronised" : "not synchronised")"
            + (restartMidway ? ", agent restarted midway" : "") + (foldS == 1 ? "" : ", fold_s \(foldS)")
    }

    /// A day to play: the fixes (1 Hz) and the strap's notifications (NDJSON lines, 1 Hz).
    struct Input: Sendable {
        var name: String
        var points: [NMEALog.Point]
        var heartRate: [String]
        var maxBPM: Int
        /// Where a restart midway cuts the fixes.
        var cut: Int
        var day: String { String(BridgeBacklog.timestamp(points.first?.time.unixMs ?? 0).prefix(10)) }
    }

    /// What the agent made of it: its finished workouts and the day's aggregate, as JSON text.
    struct Observed: Sendable {
        var workouts: String
        var health: String

        var workoutList: [[String: Any]] {
            (try? JSONSerialization.jsonObject(with: Data(workouts.utf8))) as? [[String: Any]] ?? []
        }
        var healthObject: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(health.utf8))) as? [String: Any] ?? [:] }
    }

    /// gpsfake's `-c` is the time between sentences; NMEALog writes three per fix.
    var cycle: Double { 1 / speed / 3 }

    func run(_ input: Input, broker: MosquittoBroker, deviceID: String) async throws -> Observed {
        let directory = try TemporaryDirectory("arrival")
        let heartRateFile = try directory.write("hr.ndjson", input.heartRate.joined(separator: "\n") + "\n")
        let go = directory.file("fixes-played")
        let command: String
        switch heartRate {
        case .backlogBefore:
            command = #"["/bin/sh", "-c", "cat \#(heartRateFile); exec sleep 100000"]"#
        case .live:
            command = #"["python3", "\#(Tools.fixture("tools/paced_lines.py"))", "\#(heartRateFile)", "\#(1 / speed)"]"#
        case .backlogAfter:
            command = #"["/bin/sh", "-c", "while [ ! -e \#(go) ]; do sleep 0.2; done; cat \#(heartRateFile); exec sleep 100000"]"#
        }
        let bridge = "[hr]\ntransport = \"command\"\ncommand = \(command)\nstall_timeout_s = 3600\n"
        // The agent reaches a new gpsd up to a second or two after gpsfake starts playing, and
        // gpsd passes on nothing before: at 500× that is the first 15 minutes of the day. So the
        // receiver is on earlier, standing where the day begins, for 3 s of the replay (a Pi
        // powered up before the walk); the day itself then reaches the agent whole at any speed.
        let lead = Int(3 * speed)
        let first = input.points[0]
        let leadIn = (0..<lead).map {
            NMEALog.Point(time: first.time.addingTimeInterval(Double($0 - lead)), lat: first.lat, lon: first.lon, hdop: first.hdop,
                reportsSpeed: first.reportsSpeed)
        }
        let parts = restartMidway
            // The second part starts that much back too (at least 5 minutes): what the restarted
            // agent misses then it has already stored.
            ? [leadIn + input.points.prefix(input.cut), Array(input.points.dropFirst(max(0, input.cut - max(300, lead))))]
            : [leadIn + input.points]
        let tracks = try parts.enumerated().map { try directory.write("part\($0.offset).nmea", NMEALog.text($0.element)) }

        let last = try await MQTTSubscriber(port: broker.port, filter: "keepalive/\(deviceID)/workout/last")
        defer { last.stop() }
        let gpsPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, deviceID: deviceID, gpsPort: gpsPort, extraConfig: bridge, directory: directory,
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": synchronised ? "1" : "0"], foldS: foldS)
        defer { agent.stop() }
        let linger = 5
        for (index, track) in tracks.enumerated() {
            if index > 0 {
                // A clean stop once the first part is stored; the bridge's memory comes again with
                // the restart (stored once: its stamps are believed).
                try await Self.fixesSettled(agent, day: input.day)
                agent.stop()
                try agent.start()
            }
            let gps = try await GPSFake(capture: track, port: gpsPort, cycle: cycle, once: true, linger: linger)
            defer { gps.stop() }
            let playS = Double(parts[index].count) / speed
            try await agent.explainingFailure(gps: gps) {
                try await Wait.until(timeout: playS * 2 + 60, "gpsfake to play \(track) (\(description))") {
                    !gps.process.isRunning || agent.process?.isRunning != true
                }
            }
            try #require(agent.process?.isRunning == true, "the agent exited (\(description)): \(agent.log.suffix(2000))")
        }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        // Done: the workout saved with the strap's whole run, and every notification in the day.
        _ = try await agent.explainingFailure {
            try await last.waitFor(timeout: 120, "workout/last with the strap's maximum \(input.maxBPM) (\(description))") {
                ($0.json?["hr"] as? [String: Any])?["max"] as? Int == input.maxBPM
            }
        }
        let samples = try await agent.validSamples(on: input.day, expected: input.heartRate.count, attempts: 60)
        try #require(samples == input.heartRate.count, "\(description): \(samples ?? -1) valid samples of \(input.heartRate.count)")
        let reply = try #require(try await agent.queryReply([input.day, "--include", "health", "workouts"]), "\(description): no query reply")
        let workouts = try JSONSerialization.data(withJSONObject: reply["workouts"] ?? [])
        let health = try JSONSerialization.data(withJSONObject: reply["health"] ?? [:])
        return Observed(workouts: String(decoding: workouts, as: UTF8.self), health: String(decoding: health, as: UTF8.self))
    }

    /// Until two looks a second apart find the same number of stored fixes for the day.
    static func fixesSettled(_ agent: AgentProcess, day: String) async throws {
        var counts = [-2, -1]
        try await Wait.until(timeout: 60, "the stored fixes to settle: \(counts.suffix(4))") {
            counts[counts.count - 1] == counts[counts.count - 2]
        } refresh: {
            try await Task.sleep(for: .seconds(1))
            let reply = try await agent.queryReply([day])
            counts.append(((reply?["health"] as? [String: Any])?["location"] as? [String: Any])?["fixes"] as? Int ?? 0)
        }
    }
}
