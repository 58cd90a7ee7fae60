import Foundation

@testable import Agent
@testable import Store

// Reads of a day through the writer's actor, for tests that hold only a `Store`. The agent reads a
// day through a `StoreReader` (`DayAggregate.build`, `SleepNight.compute(reader:)`); these take
// the same rows in the same order, and the night keeps its epochs as the publisher's keeping does.
extension DayAggregate {
    /// The day rebuilt from the store: rows in time order, stored up to `cursor`. Streams the
    /// rows, so a day of 1 Hz data is never held in memory.
    static func rebuild(_ day: LocalDay, settings: AggregateSettings, store: Store, upTo cursor: RowCursor?) async throws -> DayAggregate {
        let bounds = day.boundsMs
        return try await store.readStored { reads in
            var aggregate = DayAggregate(day: day, settings: settings)
            try reads.forEachHeartRate(fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = aggregate.add($0) }
            try reads.forEachFix(fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = aggregate.add($0) }
            try reads.forEachStepRecord(fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = aggregate.add($0) }
            for kind in FiguredKinds.all { try addRows(of: kind, reads, to: &aggregate, bounds: bounds, upTo: cursor) }
            return aggregate
        }
    }

    /// A kind with figures of its own (a bike's CSC rows), as `FiguredKinds.read` adds them.
    private static func addRows<Kind: FiguredKind>(
        of kind: Kind.Type, _ reads: StoreReads, to aggregate: inout DayAggregate, bounds: (start: Int64, end: Int64), upTo cursor: RowCursor?
    ) throws {
        try reads.forEach(kind, fromMs: bounds.start, toMs: bounds.end, upTo: cursor) { _ = Kind.add($0, to: &aggregate) }
    }
}

extension SleepNight {
    /// `day`'s night through the writer, rows stored up to `cursor`, computed at `nowMs`; the
    /// epochs it computed with a complete window are kept.
    static func compute(
        _ day: LocalDay, settings: AggregateSettings, store: Store, upTo cursor: RowCursor?, nowMs: Int64? = nil
    ) async throws -> SleepNight {
        let window = window(of: day)
        let dominant = try await store.readStored { reads in
            var samples = NightSamples()
            try reads.forEachHeartRate(fromMs: window.start, toMs: window.end, upTo: cursor) { _ = samples.add($0) }
            return samples.dominant
        }
        guard let series = dominant else { return .none }
        let range = SleepEpochCache.range(ofWindow: window)
        let kept = try await store.readStored { try $0.sleepEpochs(sensor: series.sensor, fromS: range.fromS, toS: range.toS) }
        let cache = SleepEpochCache(sensor: series.sensor, read: kept)
        let night = compute(day, settings: settings, series: series, nowMs: nowMs, cache: cache)
        try await store.saveSleepEpochs(cache.takeFresh())
        return night
    }
}
