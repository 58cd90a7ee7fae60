import Foundation
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import SleepStaging
@testable import Store

/// Finished nights kept in the store (schema 11, docs/storage.md "Sleep nights"): the command
/// line answers a day whose aggregate is stale from the day's rows and the night the agent kept,
/// while the night window's rows are unchanged. A night assembled from the real hour of MIT-BIH
/// NSR intervals (`AssembledNightLines`) in a real store.
@Suite("Kept sleep nights")
struct KeptSleepNightTests {
    static let settings = SleepEpochCacheTests.settings
    static let morning = SleepEpochCacheTests.morning
    static let queryTime = Date(timeIntervalSince1970: 1_795_400_000)
    static let request = QueryRequest(date: "2026-11-21", include: [.health], track: .fiveMinutes, format: .json)

    /// A store holding a 3-hour night, the night record the agent's engine handed to be kept,
    /// and the folder, for as long as the caller holds it.
    struct Rig {
        let path: String
        let store: Store
        let record: StoredSleepNight
        let agentAnswer: QueryReply
        let directory: TemporaryDirectory
    }

    static func rig() async throws -> Rig {
        let samples = try SleepEpochCacheTests.samples(try AssembledNightLines.lines(startMs: SleepEpochCacheTests.eveningMs, hours: 3))
        let directory = try TemporaryDirectory("kept-night")
        let path = directory.file("k.db")
        let store = try Store(path: path)
        try await store.write(heartRates: samples)
        await store.foldForReaders()
        let agent = QueryEngine(storePath: path, settings: settings, maxReplyBytes: .max, deviceID: "test")
        let handed = Mutex<StoredSleepNight?>(nil)
        agent.keeping.night = { night in handed.withLock { $0 = night } }
        let answer = agent.answer(request, now: queryTime)
        let record = try #require(handed.withLock { $0 }, "the agent's engine hands a finished night to be kept")
        try await store.saveSleepNight(record)
        return Rig(path: path, store: store, record: record, agentAnswer: answer, directory: directory)
    }

    /// What `keepalive query` answers (an engine that answers once).
    static func commandLine(_ rig: Rig) -> QueryReply {
        let engine = QueryEngine(storePath: rig.path, settings: settings, maxReplyBytes: .max, deviceID: "test")
        engine.carriesDays = false
        return engine.answer(request, now: queryTime)
    }

    static func sleepSeconds(_ reply: QueryReply) throws -> Int? {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
        return (document["health"] as? [String: Any])?["sleep_s"] as? Int
    }

    /// The kept record with its night's sleep changed by `seconds`, checked as a real one is.
    static func altered(_ record: StoredSleepNight, bySeconds seconds: Int) throws -> StoredSleepNight {
        var night = try JSONDecoder().decode(SleepNight.self, from: Data(record.night.utf8))
        night.main?.sleepSeconds += seconds
        var changed = record
        changed.night = String(decoding: try JSONEncoder().encode(night), as: UTF8.self)
        return changed
    }

    @Test("the command line answers a day as the agent does, with the night the agent kept")
    func sameAnswer() async throws {
        let rig = try await Self.rig()
        #expect(rig.agentAnswer.status == 200)
        #expect(Self.commandLine(rig).body == rig.agentAnswer.body)
    }

    @Test("a kept night is served while its window's rows are unchanged, and classified again once a row lands in the window")
    func servedUntilTheWindowChanges() async throws {
        let rig = try await Self.rig()
        let classified = try #require(try Self.sleepSeconds(rig.agentAnswer))
        try await rig.store.saveSleepNight(try Self.altered(rig.record, bySeconds: 60))
        #expect(try Self.sleepSeconds(Self.commandLine(rig)) == classified + 60, "the kept night was served, not classified again")

        let late = StoredHeartRate(
            sensor: "h10", timeMs: SleepEpochCacheTests.eveningMs - 3_600_000, receivedMs: SleepEpochCacheTests.eveningMs, bpm: 61,
            contact: 2, energyKJ: nil, valid: true, raw: [0x06, 61])
        try await rig.store.write(heartRates: [late])
        await rig.store.foldForReaders()
        #expect(try Self.sleepSeconds(Self.commandLine(rig)) == classified, "a row in the window: the night is classified again")
    }

    @Test("a kept night classified with other settings is not served")
    func otherSettings() async throws {
        let rig = try await Self.rig()
        let classified = try #require(try Self.sleepSeconds(rig.agentAnswer))
        var other = try Self.altered(rig.record, bySeconds: 60)
        other.settings = other.settings.replacingOccurrences(of: "hr_rule=true", with: "hr_rule=false")
        try await rig.store.saveSleepNight(other)
        #expect(try Self.sleepSeconds(Self.commandLine(rig)) == classified)
    }

    @Test("a kept night that rotted on the card fails its check and the night is classified again")
    func damaged() async throws {
        let rig = try await Self.rig()
        let classified = try #require(try Self.sleepSeconds(rig.agentAnswer))
        try await rig.store.saveSleepNight(try Self.altered(rig.record, bySeconds: 60))
        let file = try SQLiteConnection(path: rig.path)
        try file.execute("UPDATE sleep_night SET night = replace(night, 'sleepSeconds', 'sleepSecondz')")
        #expect(try Self.sleepSeconds(Self.commandLine(rig)) == classified)
    }

    @Test("a night not over yet, or still in progress, is not kept")
    func notOverNotKept() throws {
        let night = SleepNight(main: nil, naps: [])
        let window = SleepNight.window(of: Self.morning)
        #expect(night.keptRecord(Self.morning, settings: Self.settings, fingerprint: RowFingerprint(rows: 1, timeSumMs: 1), nowMs: window.end - 1) == nil)
        #expect(night.keptRecord(Self.morning, settings: Self.settings, fingerprint: RowFingerprint(rows: 1, timeSumMs: 1), nowMs: window.end) != nil)
        var going = SleepNight(
            main: NightPeriod(
                start: 0, end: 1, sleepSeconds: 1, awakeSeconds: 0, unobservedSeconds: 0, awakenings: 0, inBedSeconds: 1, efficiency: 1,
                inProgress: true),
            naps: [])
        #expect(going.keptRecord(Self.morning, settings: Self.settings, fingerprint: RowFingerprint(rows: 1, timeSumMs: 1), nowMs: nil) == nil)
        going.main?.inProgress = false
        #expect(going.keptRecord(Self.morning, settings: Self.settings, fingerprint: RowFingerprint(rows: 1, timeSumMs: 1), nowMs: nil) != nil)
    }
}
