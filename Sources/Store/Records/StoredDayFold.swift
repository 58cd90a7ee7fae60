/// A day's heart-rate and location folds as kept (schema 12, docs/storage.md "Day folds"): what a
/// query of a day whose aggregate is stale starts from instead of reading the day's rows again.
/// It serves while the day's heart-rate and fix rows are the ones it folded (their number and
/// time sum) and the settings are the same; `check` catches a row that rotted on the card.
public struct StoredDayFold: Sendable, Equatable {
    /// The local date, YYYY-MM-DD.
    public var date: String
    /// The day's end (Unix ms): retention prunes by it.
    public var endMs: Int64
    /// The day's heart-rate and fix rows folded: their number and the sum of their times after
    /// the day's start (ms); any row added or removed changes them.
    public var heartRate: RowFingerprint
    public var fixes: RowFingerprint
    /// What it was folded with (the agent's version, the zone, the dropout limit, the zones).
    public var settings: String
    /// The folds, as JSON.
    public var fold: String

    public init(date: String, endMs: Int64, heartRate: RowFingerprint, fixes: RowFingerprint, settings: String, fold: String) {
        self.date = date
        self.endMs = endMs
        self.heartRate = heartRate
        self.fixes = fixes
        self.settings = settings
        self.fold = fold
    }

    /// CRC-32 of every column.
    var check: Int64 {
        let words = CRC32.bytes(
            [endMs, heartRate.rows, heartRate.timeSumMs, fixes.rows, fixes.timeSumMs].map { UInt64(bitPattern: $0) })
        return Int64(CRC32.checksum(Array(date.utf8) + words + Array(settings.utf8) + [0] + Array(fold.utf8)))
    }
}

/// Rows of a table in a span of time, as the time index counts them: their number and the sum of
/// their times after the span's start.
public struct RowFingerprint: Sendable, Equatable {
    public var rows: Int64
    public var timeSumMs: Int64

    public init(rows: Int64, timeSumMs: Int64) {
        self.rows = rows
        self.timeSumMs = timeSumMs
    }
}

/// A kept day fold as read: nil when there is none, or when it failed its check (`damaged`).
public struct DayFoldRead: Sendable {
    public var fold: StoredDayFold?
    public var damaged: Bool
}

extension RowFingerprint {
    /// Counts one more row, `offsetMs` after the span's start.
    public mutating func count(_ offsetMs: Int64) {
        rows += 1
        timeSumMs += offsetMs
    }

    /// The rows of this span and of `later`, a span starting `laterStartMs` after this one's
    /// start: counted as one span from this one's start.
    public func followed(by later: RowFingerprint, startingAfterMs laterStartMs: Int64) -> RowFingerprint {
        RowFingerprint(rows: rows + later.rows, timeSumMs: timeSumMs + later.timeSumMs + later.rows * laterStartMs)
    }
}
