import Testing
import TestKit

@testable import Store

/// An accelerometer window carries the origins of the batches it counted at their receive time,
/// so that an agent started again still tells their replay (docs/contract.md, "Replays").
@Suite("Accelerometer batch origins kept with their windows")
struct AccelerometerOriginsTests {
    static let start: Int64 = 1_764_000_000_000

    func window(_ minute: Int64, sensor: String = "strap", origins: [Int64]) -> StoredStepRecord {
        let time = Self.start + minute * 60_000
        return StoredStepRecord(
            sensor: sensor, firstSampleMs: time, lastSampleMs: time + 59_980, receivedMs: time + 60_000, coveredMs: 60_000, steps: 88,
            batchOrigins: origins)
    }

    @Test("origins, the extremes included, come back from a slot and from the tables, newest last", arguments: [true, false])
    func readBack(journal: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(Store.Configuration(path: directory.file("k.db"), journalFoldAfter: journal ? .seconds(3600) : nil))
        _ = try await store.write(steps: [window(0, origins: [.min, -1, 0]), window(1, origins: [.max, 7]), window(2, origins: [])])
        _ = try await store.write(steps: [window(0, sensor: "other", origins: [42])])
        #expect(try await store.read { try $0.recentAccelerometerOrigins(perSensor: 10) } == ["strap": [.min, -1, 0, .max, 7], "other": [42]])
        #expect(try await store.read { try $0.recentAccelerometerOrigins(perSensor: 3) } == ["strap": [0, .max, 7], "other": [42]], "the newest three")
    }

    @Test("a window with origins round-trips through the journal's slot; one without stores no raw bytes")
    func slotRoundTrip() throws {
        let entry = JournalEntry(seq: 1, steps: [window(0, origins: [3, -3]), window(1, origins: [])])
        let body = try #require(entry.encode())
        let decoded = try #require(JournalEntry.decode(body))
        #expect(decoded == entry)
        #expect(decoded.steps.map(\.batchOrigins) == [[3, -3], []])
    }
}
