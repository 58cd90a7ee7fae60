import Foundation
import Store

/// Workouts started and stopped by command (`cmd/workout`, `keepalive workout start|stop`):
/// kept whatever their length, and detection finds nothing of its own inside them.
extension WorkoutService {
    enum ManualError: Error, CustomStringConvertible {
        case alreadyRunning(id: String)
        case notRunning
        case noTrustedTime

        var description: String {
            switch self {
            case .alreadyRunning(let id): "a workout is already going on (\(id)); stop it first"
            case .notRunning: "no workout started by command is going on"
            case .noTrustedTime: "the clock is not synchronised and there is no GPS time yet"
            }
        }
    }

    func startManual(sport: String?) async throws -> StoredWorkout {
        if let manual { throw ManualError.alreadyRunning(id: manual.id) }
        guard let now = clock.trustedNow() else { throw ManualError.noTrustedTime }
        let startMs = now.unixMs
        let id = WorkoutDocument.id(deviceID: deviceID, startMs: startMs)
        let summary = WorkoutSummary.compute(
            startMs: startMs, endMs: startMs, fixes: [], heartRates: [], steps: [], settings: settings, zones: aggregate.zones,
            stepSettings: aggregate.steps)
        let open = WorkoutDocument(id: id, sport: sport ?? "run", source: .manual, summary: summary, timeZone: aggregate.timeZone)
            .stored(finished: false, nowMs: startMs)
        try await writer.publish([workoutEvent("started", open)], saving: [open])
        manual = open
        // An automatic one going on gives way to it.
        for (id, _) in announced {
            try await store.deleteWorkout(id: id)
            announced[id] = nil
        }
        logger.info("workout started", metadata: ["id": "\(id)", "sport": "\(open.sport)", "source": "manual"])
        return open
    }

    /// Ends the manual workout now; `sport` overrides the one it was started with.
    func stopManual(sport: String?) async throws -> StoredWorkout {
        guard let open = manual else { throw ManualError.notRunning }
        guard let now = clock.trustedNow() else { throw ManualError.noTrustedTime }
        let endMs = max(now.unixMs, open.startMs)
        let summary = try await measure(fromMs: open.startMs, toMs: endMs)
        let document = WorkoutDocument(
            id: open.id, sport: sport ?? open.sport, source: .manual, summary: summary, timeZone: aggregate.timeZone)
        try await save(document, nowMs: endMs)
        manual = nil
        manualSpans.append(open.startMs...endMs)
        if manualSpans.count > 16 { manualSpans.removeFirst() }
        return try await store.readStored { try $0.workout(id: open.id) } ?? document.stored(finished: true, nowMs: endMs)
    }
}
