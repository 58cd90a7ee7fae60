import Foundation
import Store

/// What the day aggregates are computed with: from `[hr] stall_timeout_s`, `[health]` and
/// `[schedule] location_interval_s`.
struct AggregateSettings: Sendable, Equatable {
    var timeZone: TimeZone
    /// As configured: Foundation calls "UTC" "GMT", and the payload echoes the user's name.
    var zoneName: String
    var gapLimitMs: Int64
    var zones: HeartRateZones
    var locationIntervalS: Int
    var steps = StepSettings()
    /// `[person]`: the sleeper's age and sex for the sleep classifier.
    var person = PersonSettings()
    /// `[health] sleep_heart_rate_rule`.
    var sleepHeartRateRule = true
    /// What sensors declared in their own files (`ConfiguredSensor`), as configured.
    var sensors = SensorSettings()

    init(config: AgentConfig) {
        timeZone = TimeZone(identifier: config.device.timezone) ?? .current
        zoneName = config.device.timezone
        gapLimitMs = Int64(config.hr.stallTimeoutS * 1000)
        zones = HeartRateZones(maxHR: config.health.maxHR, restingHR: config.health.restingHR)
        locationIntervalS = config.schedule.locationIntervalS
        steps = config.steps
        person = config.person
        sleepHeartRateRule = config.health.sleepHeartRateRule
        sensors = config.sensors
    }

    init(
        timeZone: TimeZone, zoneName: String? = nil, gapLimitMs: Int64, zones: HeartRateZones, locationIntervalS: Int,
        steps: StepSettings = StepSettings()
    ) {
        self.timeZone = timeZone
        self.zoneName = zoneName ?? timeZone.identifier
        self.gapLimitMs = gapLimitMs
        self.zones = zones
        self.locationIntervalS = locationIntervalS
        self.steps = steps
    }
}

/// One local day's health aggregate, built incrementally from samples in time order.
struct DayAggregate: Sendable {
    let day: LocalDay
    let zoneName: String
    private(set) var heartRate: HeartRateAccumulator
    private(set) var location: LocationAccumulator
    private(set) var steps: StepsAccumulator
    /// The figures of every other kind (`FiguredKinds`), by kind name.
    private(set) var figures: [String: any KindFigures]
    /// The night credited to this day; nil until computed (`SleepNight.compute`: it is not
    /// folded sample by sample, the classifier reads the whole night).
    var sleep: SleepNight?
    /// The finished workouts that started this day: read from the store when the aggregate is
    /// published or queried (`HealthPublisher`, `build`), not folded sample by sample.
    var workouts: [StoredWorkout] = []
    /// The heart-rate and fix rows folded in, counted as the store's time index counts the day's
    /// rows: what a kept fold of the day is checked against (`DayAggregate+Kept.swift`).
    private(set) var heartRateRows = RowFingerprint(rows: 0, timeSumMs: 0)
    private(set) var fixRows = RowFingerprint(rows: 0, timeSumMs: 0)
    private let startMs: Int64

    init(day: LocalDay, settings: AggregateSettings) {
        self.day = day
        zoneName = settings.zoneName
        heartRate = HeartRateAccumulator(gapLimitMs: settings.gapLimitMs, zones: settings.zones)
        location = LocationAccumulator(intervalS: settings.locationIntervalS)
        steps = StepsAccumulator(settings: settings.steps)
        figures = FiguredKinds.empty(settings: settings)
        startMs = day.boundsMs.start
    }

    /// The day resumed from kept folds of `heartRateRows` and `fixRows`; steps are read anew.
    init(
        day: LocalDay, settings: AggregateSettings, heartRate: HeartRateAccumulator, heartRateRows: RowFingerprint,
        location: LocationAccumulator, fixRows: RowFingerprint
    ) {
        self.init(day: day, settings: settings)
        self.heartRate = heartRate
        self.heartRateRows = heartRateRows
        self.location = location
        self.fixRows = fixRows
    }

    /// False for a sample older than one already added (the day must be rebuilt).
    mutating func add(_ fix: StoredFix) -> Bool {
        guard location.add(fix) else { return false }
        fixRows.count(fix.timeMs - startMs)
        return true
    }

    mutating func add(_ sample: StoredHeartRate) -> Bool {
        guard heartRate.add(sample) else { return false }
        heartRateRows.count(sample.timeMs - startMs)
        return true
    }

    mutating func add(_ record: StoredStepRecord) -> Bool { steps.add(record) }

    mutating func add<Figures: KindFigures>(_ row: Figures.Kind.Row, to figures: Figures.Type) -> Bool {
        // Taken out while it changes, so its state is not copied for each row.
        guard let stored = self.figures.removeValue(forKey: Figures.Kind.name) else { return true }
        guard var kept = stored as? Figures else {
            self.figures[Figures.Kind.name] = stored
            return true
        }
        let added = kept.add(row)
        self.figures[Figures.Kind.name] = kept
        return added
    }

    /// The other kinds' fields, in `FiguredKinds.all` order.
    private var figureFields: [(String, JSONValue)] { FiguredKinds.all.flatMap { figures[$0.name]?.fields ?? [] } }

    /// The aggregate as of `nowMs` (slots are counted up to it while the day runs).
    func document(final: Bool, nowMs: Int64) -> HealthDocument {
        let bounds = day.boundsMs
        let slotsUntil = final ? bounds.end : min(bounds.end, nowMs + 1)
        return HealthDocument(
            head: [
                ("date", .string(day.description)),
                ("tz", .string(zoneName)),
                ("from", .string(ISO8601.formatLocal(day.start, timeZone: day.timeZone))),
                ("to", .string(ISO8601.formatLocal(day.end, timeZone: day.timeZone))),
                ("final", .bool(final)),
            ],
            body: [
                ("heart_rate", heartRate.json),
                ("location", location.json(slots: location.slots(fromMs: bounds.start, toMs: slotsUntil))),
            ] + steps.fields + figureFields + (sleep ?? .none).fields(timeZone: day.timeZone) + [("workouts", Self.workoutTotals(workouts))])
    }

    /// `{count, duration_s, distance_m}` of the day's workouts (docs/contract.md).
    static func workoutTotals(_ workouts: [StoredWorkout]) -> JSONValue {
        .object([
            ("count", .number(workouts.count)),
            ("duration_s", .number(workouts.reduce(0.0) { $0 + Double(($1.endMs ?? $1.startMs) - $1.startMs) / 1000 }, digits: 1)),
            ("distance_m", .number(workouts.reduce(0.0) { $0 + $1.distanceM }, digits: 1)),
        ])
    }

    /// The day from a read-only connection (queries, the command line; the publisher, which
    /// reads off the store's actor), rows in time order, stored up to `cursor`.
    static func build(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader, upTo cursor: RowCursor? = nil) throws -> DayAggregate {
        let bounds = day.boundsMs
        var aggregate = DayAggregate(day: day, settings: settings)
        try reader.read { reads in try reads.forEachHeartRate(fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = aggregate.add($0) } }
        try aggregate.readAllButHeartRate(reader, upTo: cursor)
        return aggregate
    }

    /// The day's fixes, step records and workouts, for a caller that reads its heart rate itself.
    mutating func readAllButHeartRate(_ reader: StoreReader, upTo cursor: RowCursor? = nil) throws {
        let bounds = day.boundsMs
        try reader.read { reads in try reads.forEachFix(fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = self.add($0) } }
        try readStepsAndWorkouts(reader, upTo: cursor)
    }

    /// The day's step records and workouts: few rows, read as they are.
    mutating func readStepsAndWorkouts(_ reader: StoreReader, upTo cursor: RowCursor? = nil) throws {
        let bounds = day.boundsMs
        try reader.read { reads in try reads.forEachStepRecord(fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = steps.add($0) } }
        try FiguredKinds.read(into: &self, fromMs: bounds.start, toMs: bounds.end, reader: reader, upTo: cursor)
        workouts = try reader.read { try $0.workouts(fromMs: bounds.start, toMs: bounds.end) }
    }
}

extension DayAggregate {
    /// Only the day's fixes (a reply with location and no health).
    static func location(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader) throws -> LocationAccumulator {
        let bounds = day.boundsMs
        var location = LocationAccumulator(intervalS: settings.locationIntervalS)
        try reader.read { reads in try reads.forEachFix(fromMs: bounds.start, toMs: bounds.end) { _ = location.add($0) } }
        return location
    }
}

/// A health aggregate payload, kept apart from its `seq` so two versions can be compared
/// ("did late data change the day?") and the seq set when it is queued.
struct HealthDocument: Sendable {
    var head: [(String, JSONValue)]
    var body: [(String, JSONValue)]

    /// Without seq: what is stored and compared.
    var canonicalText: String { JSONValue.object(head + body).text }

    func json(seq: Int64?) -> JSONValue {
        .object(head + (seq.map { [("seq", JSONValue.int($0))] } ?? []) + body)
    }
}
