import Foundation
import Store

/// One stored workout made ready for `WorkoutGPXDocument` / `WorkoutTCXDocument`: its fixes with
/// the heart rate nearest in time, the distance so far by the same filter as the record's, and
/// the km splits, all from the samples in the store (`keepalive export --workout ID`).
enum WorkoutExport {
    static func build(
        _ workout: StoredWorkout, reader: StoreReader, settings: AggregateSettings, workoutSettings: WorkoutSettings
    ) throws -> (summary: WorkoutExportSummary, points: [WorkoutTrackPoint]) {
        let endMs = workout.endMs ?? workout.startMs
        var fixes: [StoredFix] = []
        var heartRates: [StoredHeartRate] = []
        var steps: [StoredStepRecord] = []
        let sensorDistanceM = try reader.read { try FiguredKinds.workoutDistanceM($0, fromMs: workout.startMs, toMs: endMs, settings: settings) }
        try reader.read { reads in
            try reads.forEachFix(fromMs: workout.startMs, toMs: endMs + 1) { fixes.append($0) }
            try reads.forEachHeartRate(fromMs: workout.startMs, toMs: endMs + 1) { heartRates.append($0) }
            try reads.forEachStepRecord(fromMs: workout.startMs, toMs: endMs + 1) { steps.append($0) }
        }
        let figures = WorkoutSummary.compute(
            startMs: workout.startMs, endMs: endMs, fixes: fixes, heartRates: heartRates, steps: steps, settings: workoutSettings,
            zones: settings.zones, stepSettings: settings.steps, sensorDistanceM: sensorDistanceM)
        var timeline = HeartRateTimeline()
        for sample in heartRates where sample.valid { timeline.append(timeMs: sample.timeMs, bpm: sample.bpm) }
        var filter = DistanceFilter()
        let points = fixes.map { fix in
            filter.add(fix)
            return WorkoutTrackPoint(
                timeMs: fix.timeMs, lat: fix.lat, lon: fix.lon, altitudeM: fix.altMSL ?? fix.altHAE,
                heartRate: timeline.nearest(to: fix.timeMs, withinMs: settings.gapLimitMs), distanceM: filter.distanceM, cadence: nil)
        }
        let summary = WorkoutExportSummary(
            id: workout.id, sport: workout.sport, startMs: workout.startMs, endMs: endMs, movingS: figures.movingS,
            distanceM: figures.distanceM, avgHR: figures.heartRate.map { Int($0.average.rounded()) }, maxHR: figures.heartRate?.maximum,
            splitEndsMs: figures.splits.filter { $0.distanceM >= 1000 }.map(\.endMs))
        return (summary, points)
    }
}
