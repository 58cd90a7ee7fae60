import Store

/// A sample kind whose rows make a day's figures: the accumulator of `DayAggregate` each row
/// feeds. The followers of new rows (`RunningDay.catchUp`, `HealthPublisher`) go through every
/// stored kind that conforms, so a kind that feeds the day is followed by its conformance alone.
protocol DayFeeding: SampleKind {
    /// Adds the row to the day; false when it is older than one already added (the day must be
    /// computed again).
    static func add(_ row: Row, to aggregate: inout DayAggregate) -> Bool
}

extension FixKind: DayFeeding {
    static func add(_ fix: StoredFix, to aggregate: inout DayAggregate) -> Bool { aggregate.add(fix) }
}

extension HeartRateKind: DayFeeding {
    static func add(_ sample: StoredHeartRate, to aggregate: inout DayAggregate) -> Bool { aggregate.add(sample) }
}

extension StepRecordKind: DayFeeding {
    static func add(_ record: StoredStepRecord, to aggregate: inout DayAggregate) -> Bool { aggregate.add(record) }
}

enum DayFeedingKinds {
    /// The stored kinds that feed a day, in `SampleKinds.all` order.
    static let all: [any DayFeeding.Type] = SampleKinds.all.compactMap { $0 as? any DayFeeding.Type }

    /// Every feeding row of `rows`, in kind order, with its time: `add` puts it into a day.
    static func forEachRow(in rows: SampleBatch, _ body: (_ timeMs: Int64, _ add: (inout DayAggregate) -> Bool) throws -> Void) rethrows {
        for kind in all { try forEach(kind, in: rows, body) }
    }

    private static func forEach<Kind: DayFeeding>(
        _ kind: Kind.Type, in rows: SampleBatch, _ body: (Int64, (inout DayAggregate) -> Bool) throws -> Void
    ) rethrows {
        for row in rows[kind] { try body(Kind.timeMs(of: row)) { Kind.add(row, to: &$0) } }
    }
}
