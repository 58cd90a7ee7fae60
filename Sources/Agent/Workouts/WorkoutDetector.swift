import Store

/// A position the detector judges movement by: a fix reduced to what it needs, so hours of a
/// workout's track stay small in memory.
struct MotionSample: Sendable, Equatable {
    var timeMs: Int64
    var lat: Double
    var lon: Double
    /// What the receiver reported (Doppler), m/s.
    var speed: Double?
    /// Stamped with the receiver's time (`ClockRule`), not the system's.
    var gpsTimed = true

    init(_ fix: StoredFix) {
        timeMs = fix.timeMs
        lat = fix.lat
        lon = fix.lon
        speed = fix.speed
        gpsTimed = fix.timeSource == "gps"
    }

    init(timeMs: Int64, lat: Double, lon: Double, speed: Double?) {
        self.timeMs = timeMs
        self.lat = lat
        self.lon = lon
        self.speed = speed
    }
}

/// A valid heart-rate notification's time and rate.
struct PulseSample: Sendable, Equatable {
    var timeMs: Int64
    var bpm: Int
}

/// Finds workouts in time-ordered samples, on the samples' own time: the same samples give the
/// same sessions whether they arrive live, in a backlog or in a replay (docs/health.md, "Workouts").
///
/// - Moving: at least `pause_distance_m` between a fix and the one `pause_window_s` before it
///   (a gap up to `merge_gap_s` measured over the gap), and a reported speed, where there is
///   one, of at least half that pace; the walker moved over that whole window. A pause is
///   `pause_window_s` without a moving fix.
/// - A session starts where moving began once it has lasted `start_moving_s`, or where the heart
///   rate went above the threshold once it has stayed there that long, having risen by
///   `hr_rise_bpm` within the 5 minutes before (a fever's steady high rate has no rise).
/// - It ends at its last active moment once `end_pause_s` pass without one in the time of the
///   stream that started it (fixes for moving, heart rate for a heart-rate start). It counts as
///   finished only once **every** stream has got that far (its newest sample, or the clock once
///   it has stopped): a strap dumping its memory runs ahead of the GPS, and must not finish a run
///   whose fixes have not all arrived.
struct WorkoutDetector: Sendable {
    struct Session: Sendable, Equatable {
        var startMs: Int64
        var lastActiveMs: Int64
        var trigger: Trigger
        var finished = false
    }

    enum Trigger: String, Sendable {
        case moving
        case heartRate = "heart_rate"
    }

    let settings: WorkoutSettings
    /// Beats per minute a heart-rate start needs.
    let heartRateThreshold: Double

    static let riseLookbackMs: Int64 = 300_000

    init(settings: WorkoutSettings, zones: HeartRateZones) {
        self.settings = settings
        heartRateThreshold = Double(zones.restingHR) + settings.heartRateReserveFraction * Double(zones.maxHR - zones.restingHR)
    }

    /// The sessions that start at or after `fromMs`; samples before it only give context (the
    /// heart rate's rise, where moving began). Those not yet finished (see the type's comment)
    /// come last.
    func sessions(motion: [MotionSample], pulse: [PulseSample], fromMs: Int64, horizon: Horizon) -> [Session] {
        let windows = movingWindows(motion)
        var found: [Session] = []
        var current: Session?
        var movingSince: Int64?
        var lastMovingMs: Int64?
        var lastMotionMs: Int64?
        var aboveSince: Int64?
        var aboveRose = false
        var lastPulseMs: Int64?
        var lookback = 0
        var motionIndex = 0
        var pulseIndex = 0
        while motionIndex < motion.count || pulseIndex < pulse.count {
            let takeMotion = pulseIndex >= pulse.count || (motionIndex < motion.count && motion[motionIndex].timeMs <= pulse[pulseIndex].timeMs)
            let timeMs = takeMotion ? motion[motionIndex].timeMs : pulse[pulseIndex].timeMs
            if let open = current, (open.trigger == .moving) == takeMotion, timeMs - open.lastActiveMs >= settings.endPauseMs {
                found.append(Session(
                    startMs: open.startMs, lastActiveMs: open.lastActiveMs, trigger: open.trigger,
                    finished: horizon.settledMs - open.lastActiveMs >= settings.endPauseMs))
                current = nil
            }
            let active: Bool
            let since: Int64?
            let trigger: Trigger
            if takeMotion {
                active = windows[motionIndex] != nil
                if let back = windows[motionIndex] {
                    // Moving since the start of the window that shows it, not its end.
                    if movingSince == nil || timeMs - (lastMotionMs ?? timeMs) > settings.mergeGapMs { movingSince = motion[back].timeMs }
                    lastMovingMs = timeMs
                } else if timeMs - (lastMovingMs ?? .min / 2) > settings.pauseWindowMs {
                    // A pause is a window without moving: one fix whose jitter happened to
                    // shorten its window (a slow walker) does not restart the minute to a start.
                    movingSince = nil
                }
                lastMotionMs = timeMs
                motionIndex += 1
                since = movingSince
                trigger = .moving
            } else {
                let bpm = Double(pulse[pulseIndex].bpm)
                active = bpm >= heartRateThreshold
                if active {
                    if aboveSince == nil || timeMs - (lastPulseMs ?? timeMs) > settings.mergeGapMs {
                        aboveSince = timeMs
                        while pulse[lookback].timeMs < timeMs - Self.riseLookbackMs { lookback += 1 }
                        let lowest = pulse[lookback..<pulseIndex].map(\.bpm).min()
                        aboveRose = lowest.map { Double($0) <= heartRateThreshold - settings.heartRateRiseBpm } ?? false
                    }
                } else {
                    aboveSince = nil
                }
                lastPulseMs = timeMs
                pulseIndex += 1
                since = aboveRose ? aboveSince : nil
                // Heart rate keeps alive only a session it started: after a run it stays high
                // for minutes while standing, which is a pause.
                trigger = .heartRate
            }
            guard timeMs >= fromMs, active else { continue }
            if var open = current {
                if trigger == .moving || open.trigger == .heartRate {
                    open.lastActiveMs = timeMs
                    current = open
                }
            } else if let since, since >= fromMs, timeMs - since >= settings.startMovingMs {
                current = Session(startMs: since, lastActiveMs: timeMs, trigger: trigger)
            }
        }
        if var open = current {
            open.finished = horizon.settledMs - open.lastActiveMs >= settings.endPauseMs
            found.append(open)
        }
        return merged(found)
    }

    /// How far every stream's time has gone (`settledMs`): nothing before it can still change.
    struct Horizon: Sendable {
        var settledMs: Int64

        /// A stream's own horizon: its newest sample, on the data's own time, for as long as it
        /// is delivering. Only a stream silent for `end_pause_s` of real time (`silentForMs`, on
        /// the monotonic clock) stops counting, and the other stream or the clock decides (a GPS
        /// that lost the sky after the run, a strap left at home). Its newest sample plus the
        /// silence would let a replay's pace decide: between two batches of a 50× replay the
        /// silence is seconds, the data's time minutes. A stream that has delivered nothing
        /// holds everything back meanwhile (its data may be on the way: a strap's backlog).
        static func stream(newestMs: Int64?, silentForMs: Int64, endPauseMs: Int64) -> Int64? {
            silentForMs >= endPauseMs ? nil : newestMs ?? 0
        }

        /// Never past `nowMs`: a sample stamped in the future must not finish anything early.
        init(motionMs: Int64?, pulseMs: Int64?, nowMs: Int64) {
            settledMs = min([motionMs, pulseMs].compactMap { $0 }.min() ?? nowMs, nowMs)
        }
    }

    /// Whether each fix is moving (see the type's comment).
    func movingFlags(_ motion: [MotionSample]) -> [Bool] { movingWindows(motion).map { $0 != nil } }

    /// For each moving fix, the index of the fix its window starts at (`pause_window_s` before
    /// it): the walker moved over that whole window. Nil for a fix that is not moving.
    func movingWindows(_ motion: [MotionSample]) -> [Int?] {
        let minimumPace = settings.pauseDistanceM / settings.pauseWindowS
        var windows = [Int?](repeating: nil, count: motion.count)
        var back = 0
        for index in motion.indices {
            let timeMs = motion[index].timeMs
            // The newest fix at least a window before this one.
            while back + 1 < index, motion[back + 1].timeMs <= timeMs - settings.pauseWindowMs { back += 1 }
            guard back < index, motion[back].timeMs <= timeMs - settings.pauseWindowMs,
                timeMs - motion[back].timeMs <= settings.pauseWindowMs + settings.mergeGapMs
            else { continue }
            let metres = Geodesy.distanceM(lat1: motion[back].lat, lon1: motion[back].lon, lat2: motion[index].lat, lon2: motion[index].lon)
            let pace = metres / (Double(timeMs - motion[back].timeMs) / 1000)
            let speedAgrees = motion[index].speed.map { $0 >= minimumPace / 2 } ?? true
            if pace >= minimumPace && speedAgrees { windows[index] = back }
        }
        return windows
    }

    /// Whether the stretch from each fix's predecessor to it was walked (element 0: false): it
    /// lies inside the window of a moving fix. A stop at a light is a pause from a few seconds
    /// after the walker stopped to the moment they go on; the first and last metres of a
    /// workout are moving, not cut off by the window's length.
    func movingStretches(_ motion: [MotionSample]) -> [Bool] {
        var stretches = [Bool](repeating: false, count: motion.count)
        var coveredTo = 0  // stretches up to this index are marked already
        for (index, back) in movingWindows(motion).enumerated() {
            guard let back else { continue }
            for stretch in max(back + 1, coveredTo + 1)...index { stretches[stretch] = true }
            coveredTo = max(coveredTo, index)
        }
        return stretches
    }

    /// Sessions closer than `merge_gap_s` are one.
    private func merged(_ sessions: [Session]) -> [Session] {
        var result: [Session] = []
        for session in sessions {
            if var last = result.last, session.startMs - last.lastActiveMs < settings.mergeGapMs {
                last.lastActiveMs = max(last.lastActiveMs, session.lastActiveMs)
                last.finished = session.finished
                result[result.count - 1] = last
            } else {
                result.append(session)
            }
        }
        return result
    }
}
