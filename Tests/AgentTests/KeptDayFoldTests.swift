import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// A day's folds kept in the store (schema 12, docs/storage.md "Day folds"): the command line
/// answers a day whose aggregate is stale from the folds the agent kept once the day's rows
/// stopped landing, while those rows are unchanged, instead of reading them all again. A real
/// store; the heart rate is the real hour of MIT-BIH NSR intervals assembled into a 3-hour night
/// (`AssembledNightLines`; its last hour falls in the day), the fixes are synthesised (a straight
/// walk: plumbing, not accuracy).
@Suite("Kept day folds")
struct KeptDayFoldTests {
    static let settings = SleepEpochCacheTests.settings
    static let day = SleepEpochCacheTests.morning
    static let queryTime = KeptSleepNightTests.queryTime
    static let request = QueryRequest(date: "2026-11-21", include: [.health, .location], track: .fiveMinutes, format: .json)

    struct Rig {
        let path: String
        let store: Store
        let record: StoredDayFold
        let agentAnswer: QueryReply
        /// The night's notifications that fall in the day.
        let inDay: Int
        let directory: TemporaryDirectory
    }

    /// North at 1.4 m/s for 10 minutes from 52.5 N 13.4 E, at 10:00 on the day.
    static let fixes: [StoredFix] = (0..<600).map { second in
        let start = day.boundsMs.start + 10 * 3_600_000
        return StoredFix(
            timeMs: start + Int64(second) * 1000, receivedMs: start, lat: 52.5 + Double(second) * 1.4 / 111_320, lon: 13.4,
            speed: 1.4, track: 0, eph: 5, mode: 3, timeSource: "gps")
    }

    /// A store with the night and the fixes, the agent's engine's answer, and the folds (and the
    /// night) it handed to be kept once a round of following found the day's rows quiet, saved as
    /// the agent's writer saves them.
    static func rig() async throws -> Rig {
        let agent = try await SettledDayTests.rig()
        let record = try #require(agent.folds.first { $0.date == "2026-11-21" }, "the agent's engine hands the day's folds to be kept")
        try await agent.store.saveDayFold(record)
        for night in agent.nights { try await agent.store.saveSleepNight(night) }
        let bounds = day.boundsMs
        let inDay = agent.samples.filter { bounds.start <= $0.timeMs && $0.timeMs < bounds.end }.count
        return Rig(path: agent.path, store: agent.store, record: record, agentAnswer: agent.agentAnswer, inDay: inDay, directory: agent.directory)
    }

    /// What `keepalive query` answers (an engine that answers once).
    static func commandLine(_ rig: Rig) -> QueryReply {
        let engine = QueryEngine(storePath: rig.path, settings: settings, maxReplyBytes: .max, deviceID: "test")
        engine.carriesDays = false
        return engine.answer(request, now: queryTime)
    }

    static func health(_ reply: QueryReply) throws -> [String: Any] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
        return try #require(document["health"] as? [String: Any])
    }

    static func samplesCounted(_ reply: QueryReply) throws -> Int? {
        (try health(reply)["heart_rate"] as? [String: Any])?["samples"] as? Int
    }

    static func fixesCounted(_ reply: QueryReply) throws -> Int? {
        (try health(reply)["location"] as? [String: Any])?["fixes"] as? Int
    }

    /// The kept record with its heart-rate fold's sample count raised by `more`, checked as a real one is.
    static func altered(_ record: StoredDayFold, samplesBy more: Int) throws -> StoredDayFold {
        let pattern = try Regex(#""samples":(\d+)"#)
        let match = try #require(record.fold.firstMatch(of: pattern))
        let digits = try #require(match.output[1].substring)
        let counted = try #require(Int(digits))
        var changed = record
        changed.fold = record.fold.replacingCharacters(in: match.range, with: "\"samples\":\(counted + more)")
        return changed
    }

    @Test("the command line answers a stale day from the kept folds byte for byte as the agent computed it from the rows")
    func sameAnswer() async throws {
        let rig = try await Self.rig()
        #expect(rig.agentAnswer.status == 200)
        #expect(rig.inDay > 1000, "the night's last hour falls in the day")
        #expect(try Self.samplesCounted(rig.agentAnswer) == rig.inDay)
        #expect(try Self.fixesCounted(rig.agentAnswer) == 600)
        #expect(String(decoding: Self.commandLine(rig).body, as: UTF8.self) == String(decoding: rig.agentAnswer.body, as: UTF8.self))
    }

    @Test("kept folds are served while the day's rows are unchanged")
    func served() async throws {
        let rig = try await Self.rig()
        let counted = try #require(try Self.samplesCounted(rig.agentAnswer))
        try await rig.store.saveDayFold(try Self.altered(rig.record, samplesBy: 7))
        #expect(try Self.samplesCounted(Self.commandLine(rig)) == counted + 7, "the kept fold was served, not the rows read")
    }

    @Test("a heart-rate row landing in the day makes the command line read the day's rows again")
    func heartRateRowLands() async throws {
        let rig = try await Self.rig()
        let counted = try #require(try Self.samplesCounted(rig.agentAnswer))
        try await rig.store.saveDayFold(try Self.altered(rig.record, samplesBy: 7))
        let late = StoredHeartRate(
            sensor: "h10", timeMs: Self.day.boundsMs.start + 12 * 3_600_000, receivedMs: Self.day.boundsMs.start, bpm: 61, contact: 2,
            energyKJ: nil, valid: true, raw: [0x06, 61])
        try await rig.store.write(heartRates: [late])
        await rig.store.foldForReaders()
        #expect(try Self.samplesCounted(Self.commandLine(rig)) == counted + 1)
    }

    @Test("a fix landing in the day makes the command line read the day's rows again")
    func fixLands() async throws {
        let rig = try await Self.rig()
        let counted = try #require(try Self.samplesCounted(rig.agentAnswer))
        try await rig.store.saveDayFold(try Self.altered(rig.record, samplesBy: 7))
        var late = Self.fixes[0]
        late.timeMs = Self.day.boundsMs.start + 15 * 3_600_000
        try await rig.store.write(fixes: [late])
        await rig.store.foldForReaders()
        let answer = Self.commandLine(rig)
        #expect(try Self.samplesCounted(answer) == counted)
        #expect(try Self.fixesCounted(answer) == 601)
    }

    @Test("kept folds made with other settings are not served")
    func otherSettings() async throws {
        let rig = try await Self.rig()
        let counted = try #require(try Self.samplesCounted(rig.agentAnswer))
        var other = try Self.altered(rig.record, samplesBy: 7)
        other.settings = other.settings.replacingOccurrences(of: "gap_ms=10000", with: "gap_ms=20000")
        try await rig.store.saveDayFold(other)
        #expect(try Self.samplesCounted(Self.commandLine(rig)) == counted)
    }

    @Test("kept folds that rotted on the card fail their check and the day's rows are read")
    func damaged() async throws {
        let rig = try await Self.rig()
        let counted = try #require(try Self.samplesCounted(rig.agentAnswer))
        try await rig.store.saveDayFold(try Self.altered(rig.record, samplesBy: 7))
        let file = try SQLiteConnection(path: rig.path)
        try file.execute("UPDATE day_fold SET fold = replace(fold, 'validSamples', 'validSamplez')")
        #expect(try Self.samplesCounted(Self.commandLine(rig)) == counted)
    }

    @Test("retention takes a day's folds with the day's rows")
    func pruned() async throws {
        let rig = try await Self.rig()
        _ = try await rig.store.pruneRawRows(beforeMs: Self.day.boundsMs.start + 1)
        #expect(try await rig.store.readStored { try $0.dayFold(date: "2026-11-21") }.fold == nil)
    }
}
