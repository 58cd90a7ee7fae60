import Foundation
import Logging
import ServiceLifecycle
import Store

/// Finds workouts in what the store takes in, and announces them: `event/workout` when one has
/// started (once it is sure to be kept: `min_duration_s` and `min_distance_m` reached) and when
/// it has finished, retained `workout/last`, and the credit of a finished run to the selected
/// shoes (`GearBook`).
///
/// Detection runs on the samples' own time over a window kept in memory (`WorkoutWindow`), so a
/// restart, a backlog or a replay gives the same workouts with the same ids (`WorkoutDocument.id`):
/// a workout detected again is saved over itself, its version going up only if it changed.
/// Manual workouts (`cmd/workout`, `keepalive workout start|stop`) are in WorkoutService+Manual.
actor WorkoutService: Service, CustomStringConvertible {
    let settings: WorkoutSettings
    let aggregate: AggregateSettings
    let deviceID: String
    let topicRoot: String
    let store: Store
    let writer: SampleWriter
    let gear: GearBook
    let clock: AgentClock
    /// Tells the daily aggregates that a day's workouts changed.
    let workoutsChanged: @Sendable (_ startMs: Int64) async -> Void
    private let pollInterval: Duration
    /// Whether a heart-rate bridge is configured: without one no pulse can come, and the GPS
    /// alone decides when a workout has finished (not after `end_pause_s` of waiting for a strap).
    private let heartRateConfigured: Bool
    let logger: Logger

    private var cursor = RowCursor()
    /// When fixes and heart rate last arrived, on the monotonic clock (`AgentClock.uptime`): how
    /// long a stream has been silent is real time that passed, never the agent's time of day.
    /// Before the clock is synchronised that time follows the newest fix's GPS time (AgentClock),
    /// so during a replay at 50× it runs 50 times too fast, while the rows reach this service a
    /// minute at a time (`[store] fold_s`): 6 s after a fold the stored fixes read as silent for
    /// the 5 minutes that end a run, which ended 7 minutes early (issue 45).
    private var lastMotionArrival: Duration = .zero
    private var lastPulseArrival: Duration = .zero
    private var window: WorkoutWindow
    /// The window's own read-only connection (`withReader`), opened on first use.
    private var reader: StoreReader?
    /// Open workouts already announced (and stored unfinished), by id.
    var announced: [String: StoredWorkout] = [:]
    /// How far the data had got (`Horizon.settledMs`) when an open, not yet announced session
    /// was last measured, by id: measured again once the data has gone on another minute.
    private var lastMeasured: [String: Int64] = [:]
    /// The manual workout going on, if any.
    var manual: StoredWorkout?
    /// Recent finished manual workouts: detection finds nothing of its own inside them.
    var manualSpans: [ClosedRange<Int64>] = []

    /// At start, detection looks back this far (or to the end of the last workout) for one that
    /// was going on when the agent stopped.
    static let startLookbackMs: Int64 = 6 * 3_600_000
    static let rowsPerRead = 2000

    init(
        settings: WorkoutSettings, aggregate: AggregateSettings, deviceID: String, topicRoot: String, store: Store, writer: SampleWriter,
        gear: GearBook, clock: AgentClock, pollInterval: Duration = .seconds(5), logger: Logger, heartRateConfigured: Bool = true,
        workoutsChanged: @escaping @Sendable (_ startMs: Int64) async -> Void = { _ in }
    ) {
        self.heartRateConfigured = heartRateConfigured
        self.settings = settings
        self.aggregate = aggregate
        self.deviceID = deviceID
        self.topicRoot = topicRoot
        self.store = store
        self.writer = writer
        self.gear = gear
        self.clock = clock
        self.pollInterval = pollInterval
        self.logger = logger
        self.workoutsChanged = workoutsChanged
        window = WorkoutWindow(detector: WorkoutDetector(settings: settings, zones: aggregate.zones))
    }

    nonisolated var description: String { "WorkoutService" }

    func run() async throws {
        var now = clock.trustedNow()
        while now == nil {
            guard await sleepUnlessShuttingDown(for: .seconds(5)) else { return }
            now = clock.trustedNow()
        }
        guard let startTime = now else { return }
        do {
            try await start(nowMs: startTime.unixMs)
        } catch {
            logger.error("cannot read the store to look for workouts", metadata: ["error": "\(error)"])
        }
        while await sleepUnlessShuttingDown(for: pollInterval) {
            guard let now = clock.trustedNow() else { continue }
            do {
                try await tick(nowMs: now.unixMs)
            } catch {
                logger.warning("workouts not updated", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Loads what was going on: open workouts from the store, and the window from the earliest
    /// moment a workout could still be open.
    func start(nowMs: Int64) async throws {
        cursor = try await store.readStored { try $0.rowCursor() }
        for open in try await store.readStored({ try $0.openWorkouts() }) {
            if open.source == WorkoutSource.manual.rawValue { manual = open } else { announced[open.id] = open }
        }
        var fromMs = nowMs - Self.startLookbackMs
        if let last = try await store.readStored({ try $0.latestFinishedWorkout() }), let end = last.endMs { fromMs = max(fromMs, end + 1) }
        if let earliest = announced.values.map(\.startMs).min() { fromMs = min(fromMs, earliest) }
        let recent = try await store.readStored { [fromMs] in try $0.workouts(fromMs: fromMs - 86_400_000, toMs: .max) }
        for done in recent where done.source == WorkoutSource.manual.rawValue {
            manualSpans.append(done.startMs...(done.endMs ?? done.startMs))
        }
        // A copy: a read that fails leaves the window as it was.
        var loading = window
        try withReader { try loading.load(fromMs: fromMs, reader: $0, upTo: cursor) }
        window = loading
        lastMotionArrival = clock.uptime()
        lastPulseArrival = lastMotionArrival
        try await detect(nowMs: nowMs)
    }

    /// Runs `body` with the window's reader, the day's computation's path (`HealthPublisher`): a
    /// window of rows read through the writer held it up. Opened again after an error.
    private func withReader<T>(_ body: (StoreReader) throws -> T) throws -> T {
        do {
            let reader = try reader ?? StoreReader(path: store.path)
            self.reader = reader
            return try body(reader)
        } catch {
            reader = nil
            throw error
        }
    }

    /// Takes in the rows stored since the last tick and looks at the window again.
    func tick(nowMs: Int64) async throws {
        var changed = false
        while true {
            let batch = try await store.readStored { [cursor] in try $0.rows(after: cursor, limit: Self.rowsPerRead) }
            cursor = batch.cursor
            var adding = window
            let added = try withReader { try adding.add(fixes: batch[FixKind.self], heartRates: batch[HeartRateKind.self], reader: $0, upTo: cursor) }
            window = adding
            if added.motion { lastMotionArrival = clock.uptime() }
            if added.pulse { lastPulseArrival = clock.uptime() }
            if added.motion || added.pulse { changed = true }
            if batch.isLast { break }
            // More is waiting (a strap's backlog): look at what came so far before reading on, so
            // the window settles as it goes rather than holding the whole backlog (a million
            // notifications held ~20 MiB here).
            if changed { try await detect(nowMs: nowMs) }
        }
        // Nothing new and nothing open: nothing can have changed.
        guard changed || window.hasOpenSession || manual != nil else { return }
        try await detect(nowMs: nowMs)
    }

    func detect(nowMs: Int64) async throws {
        typealias Horizon = WorkoutDetector.Horizon
        let uptime = clock.uptime()
        func silentMs(since arrival: Duration) -> Int64 {
            let silence = uptime - arrival
            return silence.components.seconds * 1000 + silence.components.attoseconds / 1_000_000_000_000_000
        }
        let horizon = Horizon(
            motionMs: Horizon.stream(newestMs: window.newestMotionMs, silentForMs: silentMs(since: lastMotionArrival), endPauseMs: settings.endPauseMs),
            pulseMs: heartRateConfigured
                ? Horizon.stream(newestMs: window.newestPulseMs, silentForMs: silentMs(since: lastPulseArrival), endPauseMs: settings.endPauseMs)
                : nil,
            nowMs: nowMs)
        let sessions = window.sessions(horizon: horizon).filter { !overlapsManual($0) }
        var seen: Set<String> = []
        for session in sessions {
            let id = WorkoutDocument.id(deviceID: deviceID, startMs: session.startMs)
            seen.insert(id)
            if session.finished {
                try await finish(session, id: id, nowMs: nowMs)
            } else if announced[id] == nil {
                try await announceIfSure(session, id: id, dataMs: horizon.settledMs, nowMs: nowMs)
            }
        }
        // Announced but no longer found (late rows moved its start): replaced by what was found.
        for (id, open) in announced where !seen.contains(id) && open.startMs >= window.fromMs {
            try await store.deleteWorkout(id: id)
            announced[id] = nil
            logger.info("an open workout was found again with another start", metadata: ["id": "\(id)"])
        }
        window.settle(after: sessions, notBefore: manualSpans.last?.upperBound)
    }

    /// Announces an open session once it is sure to be kept.
    private func announceIfSure(_ session: WorkoutDetector.Session, id: String, dataMs: Int64, nowMs: Int64) async throws {
        // Not the session's own end: a strap's backlog can fix that long before the fixes arrive.
        if let last = lastMeasured[id], dataMs - last < 60_000 { return }
        lastMeasured[id] = dataMs
        let summary = try await measure(fromMs: session.startMs, toMs: session.lastActiveMs)
        guard summary.rejection(settings: settings) == nil else { return }
        let document = WorkoutDocument(
            id: id, sport: summary.sport(settings: settings), source: .auto, summary: summary, timeZone: aggregate.timeZone)
        let open = document.stored(finished: false, nowMs: nowMs)
        try await writer.publish([workoutEvent("started", open)], saving: [open])
        announced[id] = open
        lastMeasured[id] = nil
        logger.info("workout started", metadata: ["id": "\(id)", "sport": "\(document.sport)", "source": "auto"])
    }

    /// A finished session: kept (saved, announced, credited) or, if it is not a workout, dropped.
    private func finish(_ session: WorkoutDetector.Session, id: String, nowMs: Int64) async throws {
        let summary = try await measure(fromMs: session.startMs, toMs: session.lastActiveMs)
        lastMeasured[id] = nil
        if let reason = summary.rejection(settings: settings) {
            logger.debug("moving, but not a workout", metadata: [
                "start_ms": "\(session.startMs)", "reason": "\(reason)", "distance_m": "\(Int(summary.distanceM))",
            ])
            if announced.removeValue(forKey: id) != nil {
                try await store.deleteWorkout(id: id)
                try await writer.publish([
                    EventDraft.make(root: topicRoot, kind: "workout", details: [("op", "discarded"), ("id", .string(id)), ("reason", .string(reason))], at: clock.now())
                ])
            }
            return
        }
        let document = WorkoutDocument(
            id: id, sport: summary.sport(settings: settings), source: .auto, summary: summary, timeZone: aggregate.timeZone)
        try await save(document, nowMs: nowMs)
        announced[id] = nil
    }

    /// Saves a finished workout; when it is new or changed, announces it and credits it.
    func save(_ document: WorkoutDocument, nowMs: Int64) async throws {
        let finished = document.stored(finished: true, nowMs: nowMs)
        let before = try await store.readStored { try $0.workout(id: finished.id) }
        if let before, before.finished, before.record == finished.record { return }  // a replay
        let version = StoredWorkout.version(saving: true, over: before)
        var drafts: [OutboxDraft] = []
        // Found whole at once (a backlog, a replay into a new store): announced as started too,
        // so every workout has both.
        if before == nil { drafts.append(workoutEvent("started", finished)) }
        if before?.finished != true { drafts.append(workoutEvent("finished", finished, extra: Self.headline(document))) }
        if try await isNewest(finished) {
            var published = finished
            published.version = version
            drafts.append(OutboxDraft(topic: "\(topicRoot)/workout/last", retain: true) { [published] seq in
                Array(published.publishedJSON(seq: seq).utf8)
            })
        }
        // Saved with its messages, in one transaction: a client that asks for the day when it
        // hears of the workout finds it, and a crash keeps both or neither (then it is found and
        // announced again).
        try await writer.publish(drafts, saving: [finished])
        logger.info(
            before?.finished == true ? "workout changed" : "workout finished",
            metadata: ["id": "\(finished.id)", "version": "\(version)", "sport": "\(finished.sport)", "distance_m": "\(Int(finished.distanceM))"])
        if let saved = try await store.readStored({ try $0.workout(id: finished.id) }) { try await gear.workoutFinished(saved) }
        await workoutsChanged(finished.startMs)
    }

    // MARK: - Helpers

    func measure(fromMs: Int64, toMs: Int64) async throws -> WorkoutSummary {
        let fixes = try await store.read { try $0.fixes(fromMs: fromMs, toMs: toMs + 1) }
        let heartRates = try await store.read { try $0.heartRates(fromMs: fromMs, toMs: toMs + 1) }
        let steps = try await store.read { try $0.stepRecords(fromMs: fromMs, toMs: toMs + 1) }
        let sensorDistanceM = try await store.read { [aggregate] in
            try FiguredKinds.workoutDistanceM($0, fromMs: fromMs, toMs: toMs, settings: aggregate)
        }
        return WorkoutSummary.compute(
            startMs: fromMs, endMs: toMs, fixes: fixes, heartRates: heartRates, steps: steps, settings: settings, zones: aggregate.zones,
            stepSettings: aggregate.steps, sensorDistanceM: sensorDistanceM)
    }

    func workoutEvent(_ op: String, _ workout: StoredWorkout, extra: [(String, JSONValue)] = []) -> OutboxDraft {
        EventDraft.make(root: topicRoot, kind: "workout", details: [
            ("op", .string(op)), ("id", .string(workout.id)), ("sport", .string(workout.sport)), ("source", .string(workout.source)),
        ] + extra, at: clock.now())
    }

    /// What a notification says: "5.2 km run done".
    static func headline(_ document: WorkoutDocument) -> [(String, JSONValue)] {
        [
            ("distance_m", .number(document.summary.distanceM, digits: 1)), ("elapsed_s", .number(document.summary.elapsedS, digits: 1)),
            ("pace_s_per_km", .number(document.summary.paceSPerKm, digits: 1)),
        ]
    }

    private func isNewest(_ workout: StoredWorkout) async throws -> Bool {
        guard let latest = try await store.readStored({ try $0.latestFinishedWorkout() }), latest.id != workout.id else { return true }
        return (workout.endMs ?? 0) >= (latest.endMs ?? 0)
    }

    private func overlapsManual(_ session: WorkoutDetector.Session) -> Bool {
        if let manual, session.lastActiveMs >= manual.startMs { return true }
        return manualSpans.contains { session.startMs <= $0.upperBound && session.lastActiveMs >= $0.lowerBound }
    }

}
