import Store

/// What a day makes of one sample kind beyond the day's core (heart rate, location, steps, which
/// `DayAggregate` holds by name): its fields of the health document (`health/today`, the daily
/// message, a query's reply) and a workout's distance where the kind measures one. A kind brings
/// its figures by conforming to `FiguredKind`; `DayAggregate` and the workouts find it there
/// (and the Home Assistant catalogue its entities, `AnnouncedKind`).
protocol KindFigures: Sendable {
    associatedtype Kind: SampleKind
    init(settings: AggregateSettings)
    /// False when the row is older than one already added (the day is computed again).
    mutating func add(_ row: Kind.Row) -> Bool
    var fields: [(String, JSONValue)] { get }
    /// The distance the rows of a workout's window measured (a bike's wheel), nil when they
    /// measured none.
    static func workoutDistanceM(_ rows: [Kind.Row], settings: AggregateSettings) -> Double?
}

extension KindFigures {
    static func workoutDistanceM(_ rows: [Kind.Row], settings: AggregateSettings) -> Double? { nil }
}

/// A sample kind whose rows make figures of their own (`KindFigures`); it feeds the day
/// (`DayFeeding`) through them.
protocol FiguredKind: DayFeeding {
    associatedtype Figures: KindFigures where Figures.Kind == Self
}

extension FiguredKind {
    static func add(_ row: Row, to aggregate: inout DayAggregate) -> Bool { aggregate.add(row, to: Figures.self) }
    static func emptyFigures(settings: AggregateSettings) -> any KindFigures { Figures(settings: settings) }
}

enum FiguredKinds {
    /// The stored kinds with figures of their own, in `SampleKinds.all` order.
    static let all: [any FiguredKind.Type] = SampleKinds.all.compactMap { $0 as? any FiguredKind.Type }

    /// Each kind's figures, empty: a day's document has every kind's fields, rows or not.
    static func empty(settings: AggregateSettings) -> [String: any KindFigures] {
        Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.emptyFigures(settings: settings)) })
    }

    /// Adds each kind's rows with `fromMs <= ts_ms < toMs` (up to `cursor`) to `aggregate`.
    static func read(into aggregate: inout DayAggregate, fromMs: Int64, toMs: Int64, reader: StoreReader, upTo cursor: RowCursor?) throws {
        for kind in all { try read(kind, into: &aggregate, fromMs: fromMs, toMs: toMs, reader: reader, upTo: cursor) }
    }

    /// The distance the kinds' rows with `fromMs <= ts_ms <= toMs` measured (a workout's
    /// window), nil when none measured one.
    static func workoutDistanceM(_ reads: StoreReads, fromMs: Int64, toMs: Int64, settings: AggregateSettings) throws -> Double? {
        let measured = try all.compactMap { try workoutDistanceM($0, reads, fromMs: fromMs, toMs: toMs, settings: settings) }
        return measured.isEmpty ? nil : measured.reduce(0, +)
    }

    private static func workoutDistanceM<Kind: FiguredKind>(
        _ kind: Kind.Type, _ reads: StoreReads, fromMs: Int64, toMs: Int64, settings: AggregateSettings
    ) throws -> Double? {
        var rows: [Kind.Row] = []
        try reads.forEach(kind, fromMs: fromMs, toMs: toMs + 1) { rows.append($0) }
        return Kind.Figures.workoutDistanceM(rows, settings: settings)
    }

    private static func read<Kind: FiguredKind>(
        _ kind: Kind.Type, into aggregate: inout DayAggregate, fromMs: Int64, toMs: Int64, reader: StoreReader, upTo cursor: RowCursor?
    ) throws {
        let rows = try reader.read { reads in
            var rows: [Kind.Row] = []
            try reads.forEach(kind, fromMs: fromMs, toMs: toMs, upTo: cursor) { rows.append($0) }
            return rows
        }
        for row in rows { _ = Kind.add(row, to: &aggregate) }
    }
}
