import Foundation
import SensorBridge
import Testing
import TestKit

@testable import Agent
@testable import Store

/// Last night's sleep in the day aggregate (docs/sleep.md, "In the agent"): the night assembled
/// from the real hour of RR intervals (`AssembledNightLines`), stored in a real store.
@Suite("Sleep in the day aggregate")
struct SleepNightTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func settings(_ zone: TimeZone) -> AggregateSettings {
        AggregateSettings(timeZone: zone, gapLimitMs: 10_000, zones: HeartRateZones(maxHR: 190, restingHR: 60), locationIntervalS: 300)
    }

    static func store(_ lines: [String]) async throws -> Store {
        let store = try Store(path: try TemporaryDirectory("sleep").file("k.db"))
        // Stored at the bridge's own stamps (the DST night is before the agent's timestamp floor).
        let samples = try lines.map { line in
            let message = try BridgeMessage.parse(Array(line.utf8)).get()
            let timeMs = Int64(((message.timestamp?.timeIntervalSince1970 ?? 0) * 1000).rounded())
            return BridgeService.stored(message.sensor, try #require(message.heartRate), raw: message.raw, timeMs: timeMs, received: Date())
        }
        try await store.write(heartRates: samples)
        return store
    }

    static func fields(_ night: SleepNight, _ zone: TimeZone) -> [String: Any] {
        let text = JSONValue.object(night.fields(timeZone: zone)).text
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    static func ms(_ iso: String) -> Int64 {
        Int64(((ISO8601DateFormatter().date(from: iso)?.timeIntervalSince1970 ?? 0) * 1000).rounded())
    }

    /// One 9-hour night across the spring DST change, classified once for the three claims on it:
    /// the night of the morning it ends, the evening before's, and the night computed again.
    struct DSTNights: Sendable {
        let night: SleepNight
        let evening: SleepNight
        let again: SleepNight
    }

    static let acrossDaylightSaving = Task { () async throws -> DSTNights in
        // 22:00 CET on 28 March 2026 to 08:00 CEST on the 29th (the clocks jump at 02:00).
        let store = try await Self.store(try AssembledNightLines.lines(startMs: Self.ms("2026-03-28T21:00:00Z")))
        let settings = Self.settings(Self.berlin)
        let morning = try #require(LocalDay("2026-03-29", timeZone: Self.berlin))
        let night = try await SleepNight.compute(morning, settings: settings, store: store, upTo: nil)
        let evening = try await SleepNight.compute(morning.previous, settings: settings, store: store, upTo: nil)
        let again = try await SleepNight.compute(morning, settings: settings, store: store, upTo: nil)
        return DSTNights(night: night, evening: evening, again: again)
    }

    @Test("a night across the spring DST change in Europe/Berlin is credited to the morning it ends, with local times, resting HR and RMSSD")
    func acrossDaylightSaving() async throws {
        let night = try await Self.acrossDaylightSaving.value.night
        let sleep = Self.fields(night, Self.berlin)
        let sleepS = try #require(sleep["sleep_s"] as? Int, "no main sleep period: \(sleep)")
        #expect(sleepS > 4 * 3600, "most of the 9-hour night is sleep to the classifier: \(sleepS) s")
        let details = try #require(sleep["sleep"] as? [String: Any])
        // Onset before the clocks jump at 02:00 CET, the final awakening after: both with their own offset.
        #expect((details["start"] as? String)?.hasSuffix("+01:00") == true, "\(details)")
        #expect((details["end"] as? String)?.hasPrefix("2026-03-29T") == true && (details["end"] as? String)?.hasSuffix("+02:00") == true)
        #expect(details["method"] as? String == "sleepecg-ws-gru-mesa")
        // No [person] in these settings: published as such, the training mean stood in.
        #expect(details["person"] as? String == "unset", "\(details)")
        print("sleep across DST: \(details)")
        #expect((details["resting_hr"] as? Double).map { (40...90).contains($0) } == true)
        #expect((details["rmssd_ms"] as? Double ?? 0) > 0)
        let inBed = try #require(details["in_bed_s"] as? Int)
        #expect(sleepS + (details["awake_s"] as? Int ?? -1) <= inBed, "in bed: the time the strap was worn around the night")
        #expect(details["in_progress"] as? Bool == false)
    }

    @Test("a night across the spring DST change: the evening before gets nothing")
    func eveningBeforeDaylightSaving() async throws {
        let evening = try await Self.acrossDaylightSaving.value.evening
        #expect(evening.main == nil, "the night ends on the 29th: the 28th has none")
    }

    @Test("a night computed again from the same rows is the same")
    func computedAgainIsTheSame() async throws {
        let nights = try await Self.acrossDaylightSaving.value
        #expect(nights.again == nights.night, "a pure function of the stored rows")
    }

    static let strapOffAt = ms("2026-11-20T21:00:00Z") + 5 * 3_600_000  // 03:00 CET
    /// A 10-hour night from 22:00 CET without the strap from 03:00 to 05:00, classified once for both claims.
    static let strapOffNight = Task { () async throws -> SleepNight in
        let start = Self.ms("2026-11-20T21:00:00Z")  // 22:00 CET
        let off = Self.strapOffAt
        let store = try await Self.store(try AssembledNightLines.lines(startMs: start, skip: [off..<(off + 2 * 3_600_000)]))
        return try await SleepNight.compute(
            try #require(LocalDay("2026-11-21", timeZone: Self.berlin)), settings: Self.settings(Self.berlin), store: store, upTo: nil)
    }

    @Test("a strap taken off at 3 am for two hours: the sleep before and after is one night")
    func strapOff() async throws {
        let off = Self.strapOffAt
        let main = try #require(try await Self.strapOffNight.value.main)
        #expect(Int64(main.start * 1000) < off && Int64(main.end * 1000) > off + 2 * 3_600_000, "\(main)")
    }

    @Test("a strap taken off at 3 am for two hours: the two hours are unobserved, neither sleep nor in bed")
    func strapOffHoursUnobserved() async throws {
        let main = try #require(try await Self.strapOffNight.value.main)
        #expect(main.unobservedSeconds >= 2 * 3600, "\(main)")
        #expect(main.inBedSeconds <= 7 * 3600, "ten hours of night, two of them without the strap: \(main)")
    }

    @Test("a night of heart rate without a single RR interval: no night (null), no crash")
    func noBeats() async throws {
        let start = Self.ms("2026-11-20T21:00:00Z")
        let lines = (0..<(8 * 3600)).map { second in
            #"{"ts":"\#(BridgeBacklog.timestamp(start + Int64(second) * 1000))","sensor":"h10","raw":"063c"}"#
        }
        let store = try await Self.store(lines)
        let night = try await SleepNight.compute(
            try #require(LocalDay("2026-11-21", timeZone: Self.berlin)), settings: Self.settings(Self.berlin), store: store, upTo: nil)
        let fields = Self.fields(night, Self.berlin)
        #expect(fields["sleep_s"] is NSNull && fields["sleep"] is NSNull)
    }

    @Test("no strap overnight: sleep_s and sleep are null, not 0")
    func noNight() async throws {
        let store = try await Self.store([])
        let night = try await SleepNight.compute(
            try #require(LocalDay("2026-11-21", timeZone: Self.berlin)), settings: Self.settings(Self.berlin), store: store, upTo: nil)
        let fields = Self.fields(night, Self.berlin)
        #expect(fields["sleep_s"] is NSNull && fields["sleep"] is NSNull)
    }
}

/// The night through the agent: a bridge delivers it as a backlog, the daily aggregate of the
/// morning it ends carries it.
@Suite("Sleep through the agent")
struct SleepPublishingTests {
    /// A night's backlog through the command bridge, once, for the three claims on it; the agent
    /// and the broker are stopped before the outcome is handed out.
    struct Backlog: Sendable {
        let published: Result<MQTTSubscriber.Message, any Error>
        /// The night as computed from the agent's store: sleep and time in bed, if it has one.
        let expected: (sleepS: Int, inBedS: Int)?
        let evening: MQTTSubscriber.Message?
        let querySleepS: Int?
    }

    static let backlogOutcome = Task { () async throws -> Backlog in
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let morning = LocalDay(containing: Date().addingTimeInterval(-2 * 86_400), timeZone: zone)
        let start = morning.previous.start.unixMs + 22 * 3_600_000  // 22:00 the evening before
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let daily = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/daily/+")
        defer { daily.stop() }
        let directory = try TemporaryDirectory("sleep-backlog")
        let lines = try AssembledNightLines.lines(startMs: start)
        let path = try directory.write("night.ndjson", lines.joined(separator: "\n") + "\n")
        let script = "cat \(path); exec sleep 1000"
        // health/daily is published while the backlog streams in, and again as late rows arrive:
        // the one to check carries every notification of the date (all of the evening's came before).
        let midnightMs = morning.start.unixMs
        let samplesOfTheDate = lines.count - lines.prefix { line in
            let stamp = (try? BridgeMessage.parse(Array(line.utf8)).get())?.timestamp?.timeIntervalSince1970 ?? 0
            return Int64((stamp * 1000).rounded()) < midnightMs
        }.count
        let agent = try AgentProcess(
            brokerPort: broker.port, timeZone: zone.identifier,
            extraConfig: "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"\(script)\"]\nstall_timeout_s = 30\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        defer { agent.stop() }
        let topic = "keepalive/testpi/health/daily/\(morning)"
        let published = await captured {
            try await daily.waitFor(timeout: 90, "\(topic) with a night and all \(samplesOfTheDate) notifications of the date; log:\n\(agent.log.suffix(1500))") {
                $0.topic == topic && $0.json?["sleep_s"] is Int
                    && ($0.json?["heart_rate"] as? [String: Any])?["samples"] as? Int == samplesOfTheDate
            }
        }
        let reader = try StoreReader(path: agent.storePath)
        let settings = AggregateSettings(timeZone: zone, gapLimitMs: 30_000, zones: HeartRateZones(maxHR: 190, restingHR: 60), locationIntervalS: 300)
        let expected = try SleepNight.compute(morning, settings: settings, reader: reader)
        let evening = daily.messages.last { $0.topic.hasSuffix("/\(morning.previous)") }
        let reply = try await agent.queryReply([morning.description])
        return Backlog(
            published: published, expected: expected.main.map { ($0.sleepSeconds, $0.inBedSeconds) }, evening: evening,
            querySleepS: (reply?["health"] as? [String: Any])?["sleep_s"] as? Int)
    }

    @Test("a night's backlog through the command bridge: health/daily of the morning it ends carries its sleep, as computed from the store")
    func backlog() async throws {
        let outcome = try await Self.backlogOutcome.value
        let published = try outcome.published.get()
        let main = try #require(outcome.expected)
        #expect(published.json?["sleep_s"] as? Int == main.sleepS)
        let sleep = try #require(published.json?["sleep"] as? [String: Any])
        #expect(sleep["in_bed_s"] as? Int == main.inBedS && sleep["method"] as? String == "sleepecg-ws-gru-mesa")
        #expect(sleep["person"] as? String == "unset", "the agent's config has no [person]: \(sleep)")
    }

    @Test("a night's backlog: health/daily of the evening before carries no sleep")
    func eveningCarriesNone() async throws {
        let evening = try await Self.backlogOutcome.value.evening
        #expect(evening == nil || evening?.json?["sleep_s"] is NSNull, "the night is credited to the morning only")
    }

    @Test("a night's backlog: the query for the morning answers the same sleep")
    func queryAnswersTheSame() async throws {
        let outcome = try await Self.backlogOutcome.value
        let main = try #require(outcome.expected)
        #expect(outcome.querySleepS == main.sleepS)
    }
}

extension SleepPublishingTests {
    /// A fixed-offset zone in which it is now between 09:00 and 12:00 (a morning, whatever the hour of the run).
    static func morningZone(now: Date = Date()) -> TimeZone {
        let hour = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now).hour ?? 0
        let offset = ((10 - hour) % 24 + 24 + 12) % 24 - 12  // -12…11 hours, local 10:xx
        // POSIX-style names: Etc/GMT-3 is three hours ahead of UTC.
        return TimeZone(identifier: offset == 0 ? "UTC" : "Etc/GMT\(offset > 0 ? "-" : "+")\(abs(offset))")!
    }

    @Test("a night still going on this morning: health/today shows it so far, in progress, without an end")
    func today() async throws {
        let zone = Self.morningZone()
        let broker = try MosquittoBroker()
        let today = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/health/today")
        let directory = try TemporaryDirectory("sleep-today")
        // Nine hours of beats ending a minute ago: 01:xx to 10:xx local.
        let start = Date().unixMs - 9 * 3_600_000 - 60_000
        let path = try directory.write("night.ndjson", try AssembledNightLines.lines(startMs: start).joined(separator: "\n") + "\n")
        let agent = try AgentProcess(
            brokerPort: broker.port, timeZone: zone.identifier,
            extraConfig: "[hr]\ntransport = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"cat \(path); exec sleep 1000\"]\nstall_timeout_s = 30\n[schedule]\ntoday_interval_s = 2\n",
            directory: directory, environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        // Nine hours of beats are classified by a debug build before health/today carries them:
        // 80 s on a 2-core machine running two other builds, so the bound is generous.
        // The backlog lands in a second or two; a health/today classified while it landed holds
        // the night so far. Awaited: the one with the whole night, still going on.
        let message = try await today.waitFor(timeout: 300, "health/today with last night in progress (zone \(zone.identifier)); log:\n\(agent.log.suffix(1500))") {
            $0.json?["sleep_s"] is Int && ($0.json?["sleep"] as? [String: Any])?["in_progress"] as? Bool == true
        }
        #expect((message.json?["sleep_s"] as? Int ?? 0) > 3600)
        let sleep = message.json?["sleep"] as? [String: Any]
        #expect(sleep?["efficiency"] is Double || sleep?["efficiency"] is Int)
        // The strap sent until a minute ago and the night's last sleep is close to it: not over yet.
        #expect(sleep?["in_progress"] as? Bool == true && sleep?["end"] is NSNull, "a night still going on is in progress: \(sleep ?? [:])")
        agent.stop()
    }
}

/// A real scored night (slpdb slp37, Tests/Fixtures/sleep/slpdb): its beats as a strap's
/// notifications in a real store, the night found as the agent finds it, against the sleep lab's
/// scoring. The whole database is evaluated end to end by scripts/sleep-accuracy.py.
@Suite("Sleep on a real scored night")
struct SleepRealNightTests {
    /// A record's beats in a real store, its night as the agent finds it, and the record. `person`:
    /// `[person]` given from the record's header (age, sex), or left unset.
    static func night(_ name: String, heartRateRule: Bool = true, person: Bool = true) async throws -> (night: SleepNight, record: SlpdbRecord) {
        let record = try SlpdbRecord(name)
        let utc = TimeZone(identifier: "UTC")!
        let morning = try #require(LocalDay("2026-11-21", timeZone: utc))
        // A record that starts in the evening started the day before the morning it ends on.
        let evening = record.startClockSeconds >= 12 * 3600 ? Int64(86_400) : 0
        let startMs = morning.start.unixMs + (Int64(record.startClockSeconds) - evening) * 1000
        let store = try await SleepNightTests.store(record.lines(startMs: startMs))
        var settings = SleepNightTests.settings(utc)
        if person {
            settings.person = PersonSettings(birthYear: 2026 - (record.age ?? 0), sex: record.male == true ? .male : .female)
        }
        settings.sleepHeartRateRule = heartRateRule
        return (try await SleepNight.compute(morning, settings: settings, store: store, upTo: nil), record)
    }

    static func slp37(heartRateRule: Bool) async throws -> (night: SleepNight, record: SlpdbRecord) {
        try await night("slp37", heartRateRule: heartRateRule)
    }

    @Test("slpdb slp37: a night is found, its sleep within 45 min of the scored sleep, time in bed from wear (the whole recording) and an efficiency below 1")
    func slp37() async throws {
        let (night, record) = try await Self.slp37(heartRateRule: true)
        let main = try #require(night.main, "no night in a 5.8-hour scored night")
        #expect(night.person == .given)
        let error = Double(main.sleepSeconds - record.scoredSleepSeconds) / 60
        print("slp37: sleep \(main.sleepSeconds / 60) min, scored \(record.scoredSleepSeconds / 60) min, error \(error) min, in bed \(main.inBedSeconds / 60) min, efficiency \(main.efficiency)")
        // −36.0 min (docs/sleep.md, "Accuracy"): this night is slept well (efficiency 0.89) and the
        // heart-rate rule, tuned on apnoea patients' broken nights, still calls some of its sleep
        // wake. Tightened from 75 with the rule's local baseline (2026-11-26): the quantile rule
        // before it gave −70.5 here, as its 0.78 quantile turned the night's early, higher-rate
        // sleep to wake. Without any rule −16 (the test below); the bound says how far the rule may
        // take it.
        #expect(abs(error) <= 45, "sleep \(main.sleepSeconds) s against \(record.scoredSleepSeconds) s scored")
        #expect(Double(main.inBedSeconds) >= 0.9 * Double(record.scoredSeconds), "the strap was worn all night: \(main)")
        #expect(main.efficiency < 1 && !main.inProgress)
    }

    @Test("slpdb slp37 with [health] sleep_heart_rate_rule = false: the classifier's night, within 30 min of the scored sleep")
    func slp37WithoutHeartRateRule() async throws {
        let (night, record) = try await Self.slp37(heartRateRule: false)
        let main = try #require(night.main, "no night in a 5.8-hour scored night")
        let error = Double(main.sleepSeconds - record.scoredSleepSeconds) / 60
        // −16.0 min without the rule (docs/sleep.md, "Accuracy"; −10 before beats were anchored by
        // 5-minute slot).
        #expect(abs(error) <= 30, "sleep \(main.sleepSeconds) s against \(record.scoredSleepSeconds) s scored")
    }

    @Test("slpdb slp16 without [person]: the network is given its training cohort's mean age and sex, and the night is found within 45 min of the scored sleep")
    func slp16WithoutPerson() async throws {
        let (night, record) = try await Self.night("slp16", person: false)
        // Given as sleepecg gives a missing age and sex (the mask value −1, which the network never
        // saw in training), the network called this night wake: no night at all. With the training
        // mean, +1.5 min (docs/sleep.md, "Without [person]").
        let main = try #require(night.main, "no night in slp16's 6-hour scored night without [person]")
        #expect(night.person == .unset)
        let error = Double(main.sleepSeconds - record.scoredSleepSeconds) / 60
        #expect(abs(error) <= 45, "sleep \(main.sleepSeconds) s against \(record.scoredSleepSeconds) s scored")
    }
}
