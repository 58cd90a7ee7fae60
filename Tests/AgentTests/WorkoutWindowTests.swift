import Foundation
import Testing
import TestKit

@testable import Agent
@testable import Store

/// The workout window's memory: while nothing goes on it holds the last minutes, and the buffers
/// holding them are of that size, whatever came before (issue 32: a million-notification backlog
/// left a twenty-minute window holding the room of 150 000 samples).
@Suite("Workout window")
struct WorkoutWindowTests {
    @Test("a window that settles after a backlog holds buffers of the minutes it keeps, not of the backlog")
    func settledBuffersFitWhatIsKept() async throws {
        let directory = try TemporaryDirectory("workout-window")
        _ = try Store(path: directory.file("k.db"))
        let reader = try StoreReader(path: directory.file("k.db"))
        var window = WorkoutWindow(detector: WorkoutDetector(settings: WorkoutSettings(), zones: HeartRateZones(maxHR: 190, restingHR: 60)))
        // Ten hours of a resting strap at 2 Hz (synthesised: plumbing), in batches of 2 000 as the
        // service reads them, the window looked at and settled after each, as during a backlog.
        let startMs: Int64 = 1_790_000_000_000
        let batch = 2_000
        var largest = 0
        for first in stride(from: 0, to: 72_000, by: batch) {
            let heartRates = (first..<(first + batch)).map { index in
                StoredHeartRate(
                    sensor: "strap", timeMs: startMs + Int64(index) * 500, receivedMs: startMs, bpm: 60 + index % 20, contact: 2, valid: true,
                    raw: [])
            }
            if first == 0 { try window.load(fromMs: startMs, reader: reader, upTo: RowCursor()) }
            var adding = window
            _ = try adding.add(fixes: [], heartRates: heartRates, reader: reader, upTo: RowCursor())
            window = adding
            let newestMs = heartRates.last?.timeMs ?? startMs
            let horizon = WorkoutDetector.Horizon(motionMs: nil, pulseMs: newestMs, nowMs: newestMs)
            let sessions = window.sessions(horizon: horizon)
            #expect(sessions.isEmpty, "a resting strap is no workout")
            window.settle(after: sessions)
            largest = max(largest, window.count)
        }
        // Twenty minutes kept (the idle keep and the rise's context) at 2 Hz: 2 400 samples.
        #expect(window.count <= 2_401, "the window keeps the last minutes: \(window.count) samples")
        #expect(
            window.capacity <= 2 * largest,
            "the window holds room for \(window.capacity) samples after settling, for at most \(largest) held at once")
    }
}
