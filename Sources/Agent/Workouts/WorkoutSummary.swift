import Foundation
import Store

/// A workout's figures from the samples between its start and end: distance along the smoothed
/// track (`TrackSmoother`) over the stretches the detector's pause rule calls walked, moving time
/// over the same stretches, splits per km, ascent, heart
/// rate, its zones and Banister's TRIMP, steps and cadence (docs/health.md, "Workouts").
struct WorkoutSummary: Sendable {
    var startMs: Int64
    var endMs: Int64
    var movingS: Double
    var distanceM: Double
    var maxSpeedMps: Double?
    var medianMovingSpeedMps: Double?
    /// Per completed km: when it was completed, and the heart rate over it.
    var splits: [Split]
    var ascentM: Double?
    var heartRate: HeartRate?
    var trimp: Double?
    /// `steps` and `cadence` as the day's payload has them (null without a step sensor).
    var stepFields: [(String, JSONValue)]
    /// Where `distanceM` came from: "gps", or "sensor" (a bike's wheel, `KindFigures.workoutDistanceM`).
    var distanceSource = "gps"

    struct Split: Sendable, Equatable {
        var distanceM: Double
        var endMs: Int64
        var elapsedS: Double
        var averageHeartRate: Double?
    }

    struct HeartRate: Sendable, Equatable {
        var average: Double
        var maximum: Int
        var zonesS: [Double]
    }

    var elapsedS: Double { Double(endMs - startMs) / 1000 }
    var averageSpeedMps: Double? { movingS > 0 ? distanceM / movingS : nil }
    var paceSPerKm: Double? { distanceM > 0 ? movingS / distanceM * 1000 : nil }
    var averageCadence: Double? {
        guard case .object(let members)? = stepFields.first(where: { $0.0 == "cadence" })?.1,
            case .double(let value)? = members.first(where: { $0.0 == "avg" })?.1
        else { return nil }
        return value
    }

    /// Samples outside `[startMs, endMs]` are ignored.
    static func compute(
        startMs: Int64, endMs: Int64, fixes allFixes: [StoredFix], heartRates: [StoredHeartRate], steps: [StoredStepRecord],
        settings: WorkoutSettings, zones: HeartRateZones, stepSettings: StepSettings, sensorDistanceM: Double? = nil
    ) -> WorkoutSummary {
        var fixes = allFixes.filter { $0.timeMs >= startMs && $0.timeMs <= endMs }
        // As detection does (WorkoutWindow): system-timed fixes only where there are no others.
        if fixes.contains(where: { $0.timeSource == "gps" }) { fixes = fixes.filter { $0.timeSource == "gps" } }
        let pulse = heartRates.filter { $0.valid && $0.timeMs >= startMs && $0.timeMs <= endMs }.map { PulseSample(timeMs: $0.timeMs, bpm: $0.bpm) }
        let detector = WorkoutDetector(settings: settings, zones: zones)
        let motion = fixes.map(MotionSample.init)
        let moving = detector.movingFlags(motion)
        let walked = detector.movingStretches(motion)
        let track = TrackSmoother.smooth(fixes)

        // Moving time and distance over the stretches walked, along the smoothed track; a
        // pause (a light, a gap longer than merge_gap_s) adds neither.
        var movingS = 0.0
        var movingSpeeds: [Double] = []
        var distanceM = 0.0
        var splitEnds: [Int64] = []
        for index in fixes.indices.dropFirst() {
            if moving[index], let speed = fixes[index].speed { movingSpeeds.append(speed) }
            guard walked[index] else { continue }
            movingS += Double(fixes[index].timeMs - fixes[index - 1].timeMs) / 1000
            let east = track[index].east - track[index - 1].east, north = track[index].north - track[index - 1].north
            distanceM += (east * east + north * north).squareRoot()
            if distanceM >= Double(splitEnds.count + 1) * 1000 { splitEnds.append(fixes[index].timeMs) }
        }
        if fixes.isEmpty { movingS = Double(endMs - startMs) / 1000 }
        // A sensor that measures distance (a bike's wheel) stands in where the GPS is absent or
        // fell short of it by over a tenth (a tunnel, a trainer indoors, fixes lost in a
        // canyon of buildings); a GPS distance longer than the wheel's (a wrong circumference)
        // is kept: docs/health.md, "Rides".
        var distanceSource = "gps"
        if let sensorDistanceM, sensorDistanceM > 0, fixes.isEmpty || distanceM < sensorDistanceM * 0.9 {
            (distanceM, distanceSource, splitEnds) = (sensorDistanceM, "sensor", [])
        }

        var splits: [Split] = []
        var splitStart = startMs
        // Splits are where the track passed each km: a sensor's distance has no track, so none.
        for (index, end) in (distanceSource == "gps" ? splitEnds + [endMs] : []).enumerated() {
            let metres = index < splitEnds.count ? 1000 : distanceM - Double(splitEnds.count) * 1000
            guard index < splitEnds.count || metres >= 1 else { break }
            splits.append(Split(
                distanceM: metres, endMs: end, elapsedS: Double(end - splitStart) / 1000,
                averageHeartRate: mean(pulse.filter { $0.timeMs >= splitStart && $0.timeMs < end }.map { Double($0.bpm) })))
            splitStart = end
        }

        var accumulator = StepsAccumulator(settings: stepSettings)
        for record in steps where record.timeMs >= startMs && record.timeMs <= endMs { _ = accumulator.add(record) }
        let stepFields = accumulator.fields.filter { $0.0 == "steps" || $0.0 == "cadence" }

        return WorkoutSummary(
            startMs: startMs, endMs: endMs, movingS: movingS, distanceM: distanceM, maxSpeedMps: maxSustainedSpeed(fixes),
            medianMovingSpeedMps: median(movingSpeeds), splits: splits, ascentM: ascent(fixes),
            heartRate: heartRateFigures(pulse, zones: zones), trimp: trimp(pulse, zones: zones, weighting: settings.trimpWeighting),
            stepFields: stepFields, distanceSource: distanceSource)
    }

    /// The sport by the rules in `[workouts]`, or why it is not a workout at all.
    func sport(settings: WorkoutSettings) -> String {
        let speed = medianMovingSpeedMps ?? averageSpeedMps ?? 0
        if let cadence = averageCadence, cadence >= settings.runMinCadence, speed <= settings.runMaxMps * 1.5 { return "run" }
        if speed <= settings.walkMaxMps { return "walk" }
        if speed <= settings.runMaxMps { return "run" }
        return "cycle"
    }

    /// Why a detected session is not kept as a workout, or nil to keep it.
    func rejection(settings: WorkoutSettings) -> String? {
        if elapsedS < settings.minDurationS { return "shorter than min_duration_s" }
        if distanceM < settings.minDistanceM { return "nearer than min_distance_m" }
        if let speed = averageSpeedMps, speed >= settings.vehicleMinMps { return "faster than vehicle_min_mps" }
        return nil
    }

    // MARK: - Figures

    /// The fastest 5-fix median of the reported speed: one spike is not a sprint.
    private static func maxSustainedSpeed(_ fixes: [StoredFix]) -> Double? {
        let speeds = fixes.compactMap(\.speed)
        guard speeds.count >= 5 else { return speeds.max() }
        return (0...(speeds.count - 5)).compactMap { median(Array(speeds[$0..<($0 + 5)])) }.max()
    }

    /// Climb summed over a 5-fix running mean of the altitude, counted in steps of at least 3 m
    /// (hysteresis) so a receiver's vertical noise (worse than its horizontal) adds nothing.
    private static func ascent(_ fixes: [StoredFix]) -> Double? {
        let altitudes = fixes.compactMap { $0.altMSL ?? $0.altHAE }
        guard altitudes.count >= 5 else { return altitudes.isEmpty ? nil : 0 }
        let smoothed = (0...(altitudes.count - 5)).map { altitudes[$0..<($0 + 5)].reduce(0, +) / 5 }
        var reference = smoothed[0]
        var climbed = 0.0
        for altitude in smoothed {
            if altitude >= reference + 3 {
                climbed += altitude - reference
                reference = altitude
            } else if altitude < reference - 3 {
                reference = altitude
            }
        }
        return climbed
    }

    /// Each sample stands for the time to the next one, at most 5 s (a dropout is no time in a zone).
    private static func durations(_ pulse: [PulseSample]) -> [Double] {
        pulse.indices.map { index in
            index + 1 < pulse.count ? min(Double(pulse[index + 1].timeMs - pulse[index].timeMs) / 1000, 5) : 1
        }
    }

    private static func heartRateFigures(_ pulse: [PulseSample], zones: HeartRateZones) -> HeartRate? {
        guard let maximum = pulse.map(\.bpm).max(), let average = mean(pulse.map { Double($0.bpm) }) else { return nil }
        var zonesS = [Double](repeating: 0, count: HeartRateZones.reserveFractions.count)
        for (sample, seconds) in zip(pulse, durations(pulse)) {
            if let zone = zones.zone(for: sample.bpm) { zonesS[zone] += seconds }
        }
        return HeartRate(average: average, maximum: maximum, zonesS: zonesS)
    }

    /// Banister's training impulse (Banister et al. 1975; Morton, Fitz-Clarke & Banister 1990):
    /// Σ minutes × x × a·e^(b·x), x the fraction of the heart-rate reserve, a = 0.64 and b = 1.92
    /// (male) or 0.86 and 1.67 (female).
    private static func trimp(_ pulse: [PulseSample], zones: HeartRateZones, weighting: WorkoutSettings.TrimpWeighting) -> Double? {
        guard !pulse.isEmpty, zones.maxHR > zones.restingHR else { return nil }
        let (a, b) = weighting == .male ? (0.64, 1.92) : (0.86, 1.67)
        let reserve = Double(zones.maxHR - zones.restingHR)
        var total = 0.0
        for (sample, seconds) in zip(pulse, durations(pulse)) {
            let x = min(max((Double(sample.bpm) - Double(zones.restingHR)) / reserve, 0), 1)
            total += seconds / 60 * x * a * exp(b * x)
        }
        return total
    }

    private static func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }

    private static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
