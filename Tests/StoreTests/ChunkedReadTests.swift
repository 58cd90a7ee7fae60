import Foundation
import Testing
import TestKit

@testable import Store

/// A day's heart-rate rows read in chunks (`Store.forEachHeartRateInChunks`) are the rows of one
/// read, in the same order: two sensors with the same times, chunk edges between them.
@Suite("Chunked heart-rate reads")
struct ChunkedReadTests {
    @Test("chunks of 2000 give every row of a one-shot read, in order, also where two sensors share a time at a chunk's edge; a cursor leaves later rows out")
    func chunksEqualOneRead() async throws {
        let store = try Store(path: try TemporaryDirectory("chunks").file("k.db"))
        let start: Int64 = 1_795_132_800_000
        // 2 sensors × 2 600 times: 5 200 rows, the 2000th and 2001st share a time.
        let rows = (0..<2600).flatMap { second in
            ["band", "strap"].map { sensor in
                StoredHeartRate(
                    sensor: sensor, timeMs: start + Int64(second) * 1000, receivedMs: start, bpm: 60 + second % 30, contact: 2,
                    valid: true, raw: [0x16, 0x3C, 0x11, 0x04], rrIntervals: [1041])
            }
        }
        try await store.write(heartRates: rows)
        let cursor = try await store.rowCursor()
        try await store.write(heartRates: [StoredHeartRate(
            sensor: "band", timeMs: start + 500, receivedMs: start, bpm: 61, contact: 2, valid: true, raw: [0x06, 0x3D])])

        let whole = try await store.heartRates(fromMs: start, toMs: start + 2_600_000, upTo: cursor)
        var chunked: [StoredHeartRate] = []
        try await store.forEachHeartRateInChunks(fromMs: start, toMs: start + 2_600_000, upTo: cursor) { chunked.append($0) }
        #expect(whole.count == 5200)
        #expect(chunked == whole)

        var withLate: [StoredHeartRate] = []
        try await store.forEachHeartRateInChunks(fromMs: start, toMs: start + 2_600_000, upTo: nil) { withLate.append($0) }
        #expect(withLate.count == 5201 && withLate[2].timeMs == start + 500, "without a cursor the late row is read, in time order")
    }
}
