import Foundation
import Testing
import TestKit

@testable import Agent

/// A real walk's track against an independent length: SnapperGPS collection 2's walk w03
/// (Tests/Fixtures/gps/snappergps, CC BY 4.0), the fixes of a snapshot receiver replayed as NMEA
/// by gpsfake into a real gpsd and the agent process, against the path of an RTK receiver carried
/// on the same walk. Real: every fix's time, position and confidence radius. Synthesised: the
/// NMEA framing, the DOP (the confidence radius taken as gpsd's error, as
/// scripts/workout-accuracy.py does), no speed (the receiver reports none), and 2 minutes
/// standing before the walk and 7 after it (so the walk ends in the data). The whole collection:
/// scripts/workout-accuracy.py --dataset snapper (docs/health.md).
@Suite("Workouts on a real track")
struct WorkoutRealTrackTests {
    struct Fix {
        var seconds: Double
        var lat: Double
        var lon: Double
        var confidenceM: Double
    }

    static func read(_ name: String) throws -> [Fix] {
        let text = try String(contentsOfFile: Tools.fixture("gps/snappergps/\(name)"), encoding: .utf8)
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: ",").compactMap { Double($0) }
            guard fields.count >= 3 else { return nil }
            return Fix(seconds: fields[0], lat: fields[1], lon: fields[2], confidenceM: fields.count > 3 ? fields[3] : 0)
        }
    }

    /// Fix to fix, by the agent's own great-circle distance.
    static func pathLength(_ fixes: [Fix]) -> Double {
        zip(fixes, fixes.dropFirst()).reduce(0) { $0 + Geodesy.distanceM(lat1: $1.0.lat, lon1: $1.0.lon, lat2: $1.1.lat, lon2: $1.1.lon) }
    }

    @Test("a snapshot receiver's 20-minute walk (fix-to-fix path 19 times too long): one workout, its distance within 3 % of the RTK track's")
    func snapshotReceiverWalk() async throws {
        let snapper = try Self.read("w03-snapper.csv")
        let first = try #require(snapper.first)
        let last = try #require(snapper.last)
        // The RTK track over the time the snapshot receiver covered, as the script measures it.
        let rtk = try Self.read("w03-rtk.csv").filter { $0.seconds >= first.seconds && $0.seconds <= last.seconds }
        let reference = Self.pathLength(rtk)
        let raw = Self.pathLength(snapper)
        #expect(abs(reference - 1438.5) < 1 && raw > 10 * reference, "the fixture: RTK \(reference) m, snapshot path \(raw) m")

        // Two hours ago on whole seconds: 2 minutes standing where the walk starts, the walk, 7
        // minutes standing where it ends (5 minutes without moving end a workout).
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 7200).rounded(.down))
        let walkStart = start.addingTimeInterval(120)
        // A 50 % radius is 1.18 σ per axis; gpsd's eph = 19 m × HDOP is a 95 % radius (2.45 σ).
        func point(_ fix: Fix, at time: Date) -> NMEALog.Point {
            NMEALog.Point(time: time, lat: fix.lat, lon: fix.lon, hdop: min(50, max(0.05, 2.45 * fix.confidenceM / 1.18 / 19)), reportsSpeed: false)
        }
        let before = (0..<120).map { point(first, at: start.addingTimeInterval(Double($0))) }
        let walk = snapper.map { point($0, at: walkStart.addingTimeInterval($0.seconds - first.seconds)) }
        let walkEnd = walkStart.addingTimeInterval((last.seconds - first.seconds).rounded(.up))
        let after = (1...420).map { point(last, at: walkEnd.addingTimeInterval(Double($0))) }
        let directory = try TemporaryDirectory("workout-real-track")
        let track = try directory.write("w03.nmea", NMEALog.text(before + walk + after))

        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/workout")
        defer { events.stop() }
        let gpsPort = Ports.free()
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gpsPort, extraConfig: "[hr]\ntransport = \"none\"\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        let gps = try await GPSFake(capture: track, port: gpsPort, cycle: 0.005, once: true, linger: 10)
        defer { gps.stop() }
        let finished = try await agent.explainingFailure(gps: gps) {
            try await events.waitFor(timeout: 150, "event/workout finished") { $0.json?["op"] as? String == "finished" }
        }
        let day = String(BridgeBacklog.timestamp(walkStart.unixMs).prefix(10))
        let reply = try #require(try await agent.queryReply([day, "--include", "workouts"]))
        let workouts = try #require(reply["workouts"] as? [[String: Any]])
        let distance = workouts.first?["distance_m"] as? Double ?? 0
        print("SnapperGPS w03: \(workouts.count) workout(s), \(distance) m against the RTK track's \(reference) m (snapshot path \(raw) m)")
        // −1.7 % here when measured, −1.6 % in the script's run (docs/figures.md); the target is 3 % on average.
        #expect(workouts.count == 1, "one walk, one workout: \(workouts); events \(events.messages.map(\.payload))")
        #expect(abs(distance / reference - 1) <= 0.03, "\(distance) m against the RTK track's \(reference) m; finished \(finished.payload)")
    }
}
