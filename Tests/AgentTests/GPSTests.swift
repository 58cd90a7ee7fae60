import Foundation
import Testing
import TestKit

@testable import Store

/// The GPS path with real gpsd fed by gpsfake from real receiver captures.
@Suite("GPS")
struct GPSTests {
    @Test("fixes from a real capture are stored with exactly gpsd's positions and times")
    func storesGpsdPositions() async throws {
        let broker = try MosquittoBroker()
        let capture = Tools.fixture("gpsd/bu353s4.log")
        let today = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/today")
        // gpsfake plays its log whether anyone listens or not: looped, so an agent however slow to
        // start under load sees all of it (a replayed second is a duplicate and stored once).
        let gps = try await GPSFake(capture: capture, cycle: 0.1)
        defer { gps.stop() }
        // gpsd needs a couple of seconds of sentences to recognise the receiver, on every pass:
        // the first fixes of the log are never reported.
        let expectedTimes = Set(try GPSDExpected.positions(chk: capture + ".chk").compactMap(\.timeMs).sorted().dropFirst(3))
        // The system clock counts as unsynchronised: fixes keep gpsd's own time.
        let agent = try AgentProcess(brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
                                     extraConfig: "[schedule]\ntoday_interval_s = 1\n",
                                     environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "0"])
        var missingNow: [Int64] = []
        try await agent.explainingFailure(gps: gps) {
            try await Wait.until(timeout: 120, "every fix gpsd reports for the capture stored: missing \(missingNow.sorted()) of \(expectedTimes.sorted())") {
                guard let db = try? SQLiteConnection(path: agent.storePath, readOnly: true),
                    let statement = try? db.statement("SELECT ts_ms FROM fix")
                else { return false }
                var times = Set<Int64>()
                while (try? statement.step()) == true { times.insert(statement.int64(0)) }
                missingNow = Array(expectedTimes.subtracting(times))
                return missingNow.isEmpty
            }
        }
        // The day is cut on GPS time when the system clock is not synchronised (gpsd dates this
        // capture to 2034); the parked receiver's wander adds no distance.
        // (The capture was made on New Year's Eve: its fixes may straddle midnight.)
        let storedOnDay = { (date: String) -> Int in
            guard let day = LocalDay(date, timeZone: TimeZone(identifier: "UTC")!),
                let db = try? SQLiteConnection(path: agent.storePath, readOnly: true),
                let statement = try? db.statement("SELECT count(*) FROM fix WHERE ts_ms >= ? AND ts_ms < ?")
                    .bind(.integer(day.boundsMs.start), .integer(day.boundsMs.end)),
                (try? statement.step()) == true
            else { return -1 }
            return statement.int(0)
        }
        let summary: MQTTSubscriber.Message
        do {
            summary = try await today.waitFor(timeout: 45, "health/today counting the day's stored fixes") { message in
                let fixes = (message.json?["location"] as? [String: Any])?["fixes"] as? Int ?? 0
                return fixes > 0 && fixes == storedOnDay(message.json?["date"] as? String ?? "")
            }
        } catch {
            let interesting = agent.log.split(separator: "\n").filter { !$0.contains("gpsd unreachable") }.suffix(60)
            Issue.record("\(error)\nagent log:\n\(interesting.joined(separator: "\n"))")
            throw error
        }
        let location = try #require(summary.json?["location"] as? [String: Any])
        #expect(location["distance_m"] as? Double ?? .infinity < 10)
        #expect(location["bbox"] as? [Double] != nil)
        #expect((summary.json?["date"] as? String)?.hasPrefix("2034-") == true, "\(summary)")
        #expect(agent.stop() == 0, "\(agent.log)")

        let expected = try GPSDExpected.positions(chk: capture + ".chk")
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        let statement = try db.statement("SELECT ts_ms, lat, lon, time_source FROM fix ORDER BY ts_ms")
        var stored: [(Int64, Double, Double, String)] = []
        while try statement.step() {
            stored.append((statement.int64(0), statement.double(1), statement.double(2), statement.text(3)))
        }
        // gpsd needs a couple of seconds of sentences to recognise the receiver: the first fixes are lost.
        #expect(stored.count >= 10, "only \(stored.count) fixes stored; log:\n\(agent.log.suffix(2000))")
        // Every stored fix is gpsd's report of that second, to the last digit.
        let byTime = Dictionary(expected.compactMap { tpv in tpv.timeMs.map { ($0, tpv) } }, uniquingKeysWith: { first, _ in first })
        for row in stored {
            let tpv = try #require(byTime[row.0], "stored a fix at \(row.0) that gpsd never reported")
            #expect(row.1 == tpv.lat && row.2 == tpv.lon, "at \(row.0): stored \(row.1),\(row.2), gpsd \(tpv.lat),\(tpv.lon)")
            #expect(row.3 == "gps")
        }
        // And none of gpsd's later fixes is missing: from the first stored one on, all are there.
        let first = try #require(stored.first).0
        let missing = byTime.keys.filter { $0 >= first && !stored.map(\.0).contains($0) }
        #expect(missing.isEmpty, "gpsd reported fixes the agent did not store: \(missing.sorted())")
    }

    @Test("a receiver without a fix: the session is reopened every fix_timeout_s, with an event each time")
    func noFixReacquires() async throws {
        let broker = try MosquittoBroker()
        let events = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/event/gps_reacquire")
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu303-nofix.log"), cycle: 0.05)
        let agent = try AgentProcess(brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 2)
        let reacquisitions = try await events.waitFor(count: 3, timeout: 60, "three gps_reacquire events") { _ in true }
        // On the agent's own stamps: each reopen waited out fix_timeout (2 s) without a fix. (Not
        // how soon they came: that is the machine's load, not the agent's rule.)
        let stamps = reacquisitions.prefix(3).compactMap { ($0.json?["ts"] as? String).flatMap(QueryFreshnessTests.parseTimestamp) }
        #expect(stamps.count == 3)
        for (earlier, later) in zip(stamps, stamps.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 1.9, "reacquired \(later.timeIntervalSince(earlier)) s after the previous one")
        }
        // The first three, in order (a loaded machine may have let more arrive by now).
        #expect(reacquisitions.prefix(3).map { $0.json?["count"] as? Int } == [1, 2, 3])
        #expect(agent.log.contains("reacquiring GPS"))
    }

    @Test("gpsd not running at start: the agent reports disconnected, then connects when gpsd appears")
    func gpsdLate() async throws {
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let port = Ports.free()
        // fix_timeout 30 s, as the other tests that wait for fixes: the no-fix reopening is tested
        // above; here a loaded machine must not turn a slow first fix into a reopen (issue 33).
        let agent = try AgentProcess(brokerPort: broker.port, gpsPort: port, gpsFixTimeout: 30)
        try await status.waitFor("gps disconnected") { Self.gpsState($0) == "disconnected" }
        try await agent.process!.waitForLine(containing: "gpsd unreachable")
        let gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), port: port, cycle: 0.1)
        try await status.waitFor(timeout: 60, "gps fixed once gpsd is there") { Self.gpsState($0) == "fixed" }
        gps.stop()
    }

    @Test("gpsd killed and started again: the agent notices and gets fixes again")
    func gpsdRestart() async throws {
        let broker = try MosquittoBroker()
        let status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        let port = Ports.free()
        var gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), port: port, cycle: 0.1)
        // fix_timeout 30 s: what is tested is a lost session, not a slow fix (a fresh-clone run
        // beside a CPU hog reopened a session that had no fix after 5 s and waited 60 s in vain).
        let agent = try AgentProcess(brokerPort: broker.port, gpsPort: port, gpsFixTimeout: 30)
        _ = try await agent.explainingFailure(gps: gps) {
            try await status.waitFor(timeout: 60, "first fix") { Self.gpsState($0) == "fixed" }
        }
        gps.stop()
        try await agent.process!.waitForLine(containing: "gpsd session lost", timeout: 10)
        let before = status.messages.count
        gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), port: port, cycle: 0.1)
        try await Wait.until(timeout: 60, "gps fixed again after the restart; agent log:\n\(agent.log.suffix(1500))") {
            status.messages.dropFirst(before).contains { Self.gpsState($0) == "fixed" }
        }
        _ = agent
    }

    static func gpsState(_ message: MQTTSubscriber.Message) -> String? {
        (message.json?["gps"] as? [String: Any])?["state"] as? String
    }
}

/// Bad input from gpsd, which a real gpsd cannot be made to send: a stand-in server.
@Suite("GPS bad input")
struct GPSBadInputTests {
    @Test("garbage JSON, NaN, absurd values and a flood from gpsd: nothing bad stored, the agent stays up, good fixes still stored")
    func hostileGpsd() async throws {
        let broker = try MosquittoBroker()
        let port = Ports.free()
        let hostile = try ManagedProcess(
            name: "hostile_gpsd", executable: Tools.find("python3"),
            arguments: [Tools.fixture("tools/hostile_gpsd.py"), "\(port)"])
        try await hostile.waitForLine(containing: "listening")
        let agent = try AgentProcess(brokerPort: broker.port, gpsPort: port, gpsFixTimeout: 30,
                                     environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "0"])
        try await hostile.waitForLine(containing: "done 1", timeout: 30)
        let db = { try SQLiteConnection(path: agent.storePath, readOnly: true) }
        try await Wait.until(timeout: 20, "the five good fixes to be stored; log:\n\(agent.log.suffix(3000))") {
            (try? db().scalarInt("SELECT count(*) FROM fix WHERE lat BETWEEN 10.5 AND 10.5005")) == 5
        }
        #expect(agent.process?.isRunning == true)
        let total = try db().scalarInt("SELECT count(*) FROM fix")
        #expect(total == 5, "only the good fixes may be stored")
        let bad = try db().scalarInt("SELECT count(*) FROM fix WHERE abs(lat) > 90 OR abs(lon) > 180")
        #expect(bad == 0)
        hostile.stop()
        #expect(agent.stop() == 0)
    }
}
