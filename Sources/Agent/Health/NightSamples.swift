import SleepStaging
import Store

/// A night window's heart-rate notifications, by sensor, in time order, kept compactly: what
/// `SleepNight` is computed from (times, bpm, valid, RR intervals; not the raw bytes, the
/// receive time or the energy). About 9 bytes a notification where a `StoredHeartRate` holds
/// ~140 and a heap block, so a running day can keep its night's window between queries and
/// fold in only the rows stored since (issue 32).
struct NightSamples: Sendable {
    /// One sensor's notifications, oldest first.
    typealias Series = NotificationSeries

    private(set) var bySensor: [String: Series] = [:]
    /// Counts the notifications added: a night computed at one revision holds while it stands.
    private(set) var revision = 0

    /// False for a notification older than its sensor's newest kept one: the window must then be
    /// collected again from the store.
    mutating func add(_ sample: StoredHeartRate) -> Bool {
        revision += 1
        return bySensor[sample.sensor, default: Series(sensor: sample.sensor)].append(sample)
    }

    /// The strap with the most valid notifications (ties: the first name): one chest, one strap.
    var dominant: Series? {
        bySensor.values.max { a, b in a.validCount != b.validCount ? a.validCount < b.validCount : a.sensor > b.sensor }
    }

    var count: Int { bySensor.values.reduce(0) { $0 + $1.count } }

    /// No notifications, at this revision: what a running day keeps of a night it let go
    /// (`RunningDay.releaseNight`), so a night classified at the revision still stands.
    func released() -> NightSamples { Self(releasedAt: revision) }

    /// No notifications, at `revision` (the number of notifications the window held).
    init(releasedAt revision: Int) { self.revision = revision }

    init() {}

    /// The notifications of a night window from the store, rows stored up to `cursor`.
    init(window: (start: Int64, end: Int64), reader: StoreReader, upTo cursor: RowCursor?) throws {
        var collected = NightSamples()
        try reader.read { reads in try reads.forEachHeartRate(fromMs: window.start, toMs: window.end, upTo: cursor) { _ = collected.add($0) } }
        self = collected
    }
}

extension NotificationSeries {
    /// The notifications of one sensor (in time order), as a series.
    init(_ samples: some Sequence<StoredHeartRate>, sensor: String) {
        self.init(sensor: sensor)
        for sample in samples { _ = append(sample) }
    }

    /// False, and nothing added, for a notification older than the newest one kept.
    mutating func append(_ sample: StoredHeartRate) -> Bool {
        append(timeMs: sample.timeMs, bpm: sample.bpm, valid: sample.valid, rr1024: sample.rrIntervals)
    }
}
