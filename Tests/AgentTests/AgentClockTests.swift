import Foundation
import Logging
import Testing
import TestKit

@testable import Agent
@testable import Store

/// One agent clock (AgentClock): what time and what local day it is, agreed by every part of
/// the agent — kernel time once synchronised, GPS-corrected before that, stepped clocks
/// re-slotted — checked in-process and through the real agent, broker and gpsd.
@Suite("Agent clock")
struct AgentClockTests {
    static let t0 = Date(timeIntervalSince1970: 1_795_248_000)  // 2026-11-21T08:00:00Z

    @Test("unsynchronised without GPS time: the kernel's time, and no trusted time to cut days on")
    func untrustedWithoutGPS() {
        let clock = ServicesInProcessTests.ManualClock(Self.t0, synchronised: false)
        #expect(clock.agent.trustedNow() == nil)
        #expect(clock.agent.now() == Self.t0)
        #expect(!clock.agent.isGPSCorrected)
    }

    @Test("unsynchronised with a GPS-timed fix: the agent's time is the kernel's corrected by GPS time")
    func correctedByGPS() {
        let clock = ServicesInProcessTests.ManualClock(Self.t0, synchronised: false)
        // The Pi booted at its last saved time, three days behind the GPS.
        clock.agent.observe(gpsTime: Self.t0.addingTimeInterval(3 * 86_400), systemTime: Self.t0)
        clock.set(Self.t0.addingTimeInterval(10))
        #expect(clock.agent.now() == Self.t0.addingTimeInterval(3 * 86_400 + 10))
        #expect(clock.agent.trustedNow() == clock.agent.now())
        #expect(clock.agent.systemNow() == Self.t0.addingTimeInterval(10), "receive stamps stay on the kernel's clock")
        #expect(clock.agent.isGPSCorrected)
    }

    @Test("once the kernel's clock is synchronised, the agent's time is the kernel's")
    func synchronisedWins() {
        let clock = ServicesInProcessTests.ManualClock(Self.t0, synchronised: false)
        clock.agent.observe(gpsTime: Self.t0.addingTimeInterval(0.4), systemTime: Self.t0)
        clock.kernel.setSynchronised(true)
        #expect(clock.agent.now() == Self.t0)
        #expect(!clock.agent.isGPSCorrected)
    }

    @Test("a clock stepped forward by 30 minutes publishes the slot it lands in, without filling the slots it skipped")
    func steppedForwardNotFilled() async throws {
        let (rig, clock, publisher) = try Self.locationRig()
        await publisher.publishSlots(upTo: Self.slot(0))
        clock.set(Self.t0.addingTimeInterval(300))
        await publisher.publishSlots(upTo: Self.slot(1))
        clock.step(to: Self.t0.addingTimeInterval(300 + 1800))
        await publisher.publishSlots(upTo: Self.slot(7))
        // No fix in this rig: each slot's message is on event/no_position (docs/contract.md, "location").
        let messages = try await rig.queued("keepalive/p/event/no_position")
        #expect(messages.count == 3, "one message per slot reached, none for the skipped ones: \(messages.count)")
    }

    @Test("a clock stepped back by an hour: slots follow the new time, each once, seqs still rising")
    func steppedBackReslots() async throws {
        let (rig, clock, publisher) = try Self.locationRig()
        clock.set(Self.t0.addingTimeInterval(3600))
        await publisher.publishSlots(upTo: Self.slot(12))
        clock.step(to: Self.t0)
        await publisher.publishSlots(upTo: Self.slot(0))
        clock.set(Self.t0.addingTimeInterval(300))
        await publisher.publishSlots(upTo: Self.slot(1))
        // No fix in this rig: each slot's message is on event/no_position (docs/contract.md, "location").
        let messages = try await rig.queued("keepalive/p/event/no_position")
        #expect(messages.count == 3)
        let seqs = messages.compactMap { $0["seq"] as? Int }
        #expect(seqs == seqs.sorted() && Set(seqs).count == 3)
        let created = messages.compactMap { $0["created_at"] as? Int }
        #expect(created == [Int(Self.t0.timeIntervalSince1970) + 3600, Int(Self.t0.timeIntervalSince1970), Int(Self.t0.timeIntervalSince1970) + 300])
    }

    static func slot(_ index: Int64) -> Int64 { Int64(t0.timeIntervalSince1970) + index * 300 }

    static func locationRig() throws -> (ServicesInProcessTests.Rig, ServicesInProcessTests.ManualClock, LocationPublisher) {
        let rig = try ServicesInProcessTests.Rig()
        let clock = ServicesInProcessTests.ManualClock(Self.t0.addingTimeInterval(0))
        let publisher = LocationPublisher(
            topicRoot: "keepalive/p", mirrorTopic: nil, intervalS: 300, deviceID: "pi", writer: rig.writer, clock: clock.agent,
            logger: Logger(label: "test"))
        return (rig, clock, publisher)
    }

    // MARK: - Through the agent

    /// Asks the agent over MQTT until it answers (its subscription may not be in place yet).
    static func ask(_ broker: MosquittoBroker, _ date: String) async throws -> [String: Any] {
        var last: Error?
        for _ in 1...30 {
            do {
                let text = try await MQTTTools.request(
                    port: broker.port, topic: "keepalive/testpi/selection/date", message: date, timeout: 2)
                return QueryTests.object(text)
            } catch {
                last = error
            }
        }
        throw WaitTimeout(description: "no reply for \(date): \(String(describing: last))")
    }

    static func hours(_ reply: [String: Any]) -> Double? {
        guard let health = reply["health"] as? [String: Any],
            let from = (health["from"] as? String).flatMap(ISO8601DateFormatter().date(from:)),
            let to = (health["to"] as? String).flatMap(ISO8601DateFormatter().date(from:))
        else { return nil }
        return to.timeIntervalSince(from) / 3600
    }

    /// Replies (as JSON) of one agent whose clock is set off to the morning after a daylight-saving
    /// change, asked once for four days; the agent and the broker are stopped before they are handed out.
    struct OffsetClock: Sendable {
        let today: String
        let short: String
        let long: String
        let tomorrow: String
    }

    static let offsetClock = Task { () async throws -> OffsetClock in
        // 2027-03-29 10:00 in Berlin, the Monday after clocks went forward (2027-03-28 has 23 hours).
        let target = Date(timeIntervalSince1970: 1_806_307_200)
        let offset = target.timeIntervalSinceNow.rounded()
        let broker = try MosquittoBroker()
        let agent = try AgentProcess(
            brokerPort: broker.port, timeZone: "Europe/Berlin", extraConfig: "[hr]\ntransport = \"none\"\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1", "KEEPALIVE_FAULT_CLOCK_OFFSET_S": "\(offset)"])
        defer { _ = agent.stop(); broker.stop() }
        func ask(_ date: String) async throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: try await Self.ask(broker, date)), as: UTF8.self)
        }
        return OffsetClock(
            today: try await ask("2027-03-29"), short: try await ask("2027-03-28"), long: try await ask("2026-10-25"),
            tomorrow: try await ask("2027-03-30"))
    }

    static func offsetClockReply(_ reply: KeyPath<OffsetClock, String>) async throws -> [String: Any] {
        let text = try await offsetClock.value[keyPath: reply]
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("the agent's clock set off to the morning after a daylight-saving change: its today is answered")
    func offsetClockAnswersItsToday() async throws {
        let today = try await Self.offsetClockReply(\.today)
        #expect(today["ok"] as? Bool == true, "the offset clock's today is answered: \(today)")
    }

    @Test("the agent's clock set off to the morning after a daylight-saving change: the 23-hour day before is answered")
    func offsetClockAnswersTheShortDay() async throws {
        let short = try await Self.offsetClockReply(\.short)
        #expect(short["ok"] as? Bool == true, "\(short)")
        #expect(Self.hours(short) == 23, "the spring-forward day has 23 hours: \(short)")
    }

    @Test("the agent's clock set off to the morning after a daylight-saving change: the 25-hour day is answered")
    func offsetClockAnswersTheLongDay() async throws {
        let long = try await Self.offsetClockReply(\.long)
        #expect(Self.hours(long) == 25, "the fall-back day has 25 hours: \(long)")
    }

    @Test("the agent's clock set off to the morning after a daylight-saving change: the day after its today is refused")
    func offsetClockRefusesTomorrow() async throws {
        let tomorrow = try await Self.offsetClockReply(\.tomorrow)
        #expect(tomorrow["ok"] as? Bool == false, "a day after the agent's today is refused: \(tomorrow)")
        #expect(((tomorrow["error"] as? [String: Any])?["message"] as? String)?.contains("2027-03-29") == true, "\(tomorrow)")
    }

    @Test("an unsynchronised clock three days behind the GPS: the GPS-dated day is today for the agent, answered over MQTT and by the command line")
    func gpsDatedDayAnswered() async throws {
        let gpsNow = Date().addingTimeInterval(3 * 86_400)
        let gpsDay = LocalDay(containing: gpsNow, timeZone: QueryTests.utc)
        let directory = try TemporaryDirectory("gps-ahead")
        let track = try directory.write("walk.nmea", NMEALog.text(NMEALog.walk(start: gpsNow.addingTimeInterval(-120), seconds: 120)))
        let broker = try MosquittoBroker()
        let gps = try await GPSFake(capture: track, cycle: 0.05)
        defer { gps.stop() }
        let agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, extraConfig: "[hr]\ntransport = \"none\"\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "0"])
        defer { _ = agent.stop() }
        try await Wait.until(timeout: 60, "GPS-stamped fixes stored; gpsfake:\n\(gps.process.text.suffix(1000))\nthe agent's log:\n\(agent.log.suffix(3000))") {
            let db = try? SQLiteConnection(path: agent.storePath, readOnly: true)
            return (try? db?.scalarInt("SELECT count(*) FROM fix WHERE time_source = 'gps'")) ?? 0 >= 5
        }
        let reply = try await Self.ask(broker, gpsDay.description)
        #expect(reply["ok"] as? Bool == true, "the GPS day is answered, not refused as a future date: \(reply)")
        let fixes = ((reply["health"] as? [String: Any])?["location"] as? [String: Any])?["fixes"] as? Int
        #expect((fixes ?? 0) >= 5, "\(reply)")
        let fromCLI = try await agent.queryReply([gpsDay.description])
        #expect(fromCLI?["ok"] as? Bool == true, "keepalive query answers the GPS day too: \(String(describing: fromCLI))")
    }

    @Test(
        "the clock stepped two hours while samples stream in (chrony setting it): every notification stored once, every message's seq once, the location slots go on on the new time",
        arguments: [7200, -7200])
    func stepLosesNothing(stepS: Int) async throws {
        let directory = try TemporaryDirectory("clock-step")
        // 60 notifications without a bridge stamp, 10 a second: the step (after 3 s) falls inside.
        let bridge = try directory.write("bridge.py", """
            import sys, time
            for i in range(60):
                sys.stdout.write('{"sensor":"strap","raw":"06%02x"}\\n' % (60 + i % 40))
                sys.stdout.flush()
                time.sleep(0.1)
            time.sleep(3600)
            """)
        let broker = try MosquittoBroker()
        let watcher = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/#")
        let agent = try AgentProcess(
            brokerPort: broker.port,
            extraConfig: """
                [hr]
                transport = "command"
                command = ["\(Tools.find("python3"))", "\(bridge)"]
                # Never restarted while the test runs, however loaded the machine: a restarted
                # bridge would send its 60 unstamped lines again, as new notifications.
                stall_timeout_s = 600
                [schedule]
                location_interval_s = 1
                status_interval_s = 1
                """,
            environment: [
                "KEEPALIVE_CLOCK_SYNCHRONISED": "1", "KEEPALIVE_FAULT_CLOCK_STEP_S": "\(stepS)", "KEEPALIVE_FAULT_CLOCK_STEP_AFTER_S": "3",
            ])
        defer { _ = agent.stop() }
        try await agent.process!.waitForLine(containing: stepS > 0 ? "the clock stepped forward" : "the clock stepped back", timeout: 60)
        // Slots after the step: three more location messages, on the new time.
        let isAfterStep = { (seconds: Int) in stepS > 0 ? seconds > Int(Date().timeIntervalSince1970) + 3600 : seconds < Int(Date().timeIntervalSince1970) - 3600 }
        _ = try await watcher.waitFor(count: 3, timeout: 30, "three location slots after the step") {
            // No GPS here: a slot's message is on event/no_position.
            $0.topic.hasSuffix("/event/no_position") && isAfterStep($0.json?["created_at"] as? Int ?? 0)
        }
        // The ingest ring is folded into the tables every second (AgentProcess's fold_s).
        try await Wait.until(timeout: 60, "all 60 notifications stored") {
            let db = try? SQLiteConnection(path: agent.storePath, readOnly: true)
            return (try? db?.scalarInt("SELECT count(*) FROM hr_sample")) ?? 0 >= 60
        }
        let db = try SQLiteConnection(path: agent.storePath, readOnly: true)
        #expect(try db.scalarInt("SELECT count(*) FROM hr_sample") == 60, "each notification stored once")
        let stamps = try db.statement("SELECT ts_ms FROM hr_sample ORDER BY id")
        var times: [Int64] = []
        while try stamps.step() { times.append(stamps.int64(0)) }
        #expect(times.contains { isAfterStep(Int($0 / 1000)) }, "notifications after the step carry the new time")
        #expect(agent.stop() == 0)
        let seqs = watcher.messages.filter { !$0.retained }.compactMap { $0.json?["seq"] as? Int }
        #expect(Set(seqs).count == seqs.count, "a seq published twice: \(seqs)")
    }

}
