/// A finished night as kept (schema 11, docs/storage.md "Sleep nights"): the classified night
/// of a local date with what it was computed from, so that a query of a day whose aggregate is
/// stale does not classify an unchanged night again. It serves while the night window's rows and
/// the settings are the same; `check` catches a row that rotted on the card.
public struct StoredSleepNight: Sendable, Equatable {
    /// The local date credited with the night, YYYY-MM-DD.
    public var date: String
    /// The night window's heart-rate rows when it was classified: their number and the sum of
    /// their times after the window's start (ms); any row added or removed changes them.
    public var window: RowFingerprint
    /// What it was classified with (the agent's version, the person, the rules, the zone).
    public var settings: String
    /// The night, as JSON.
    public var night: String

    public init(date: String, window: RowFingerprint, settings: String, night: String) {
        self.date = date
        self.window = window
        self.settings = settings
        self.night = night
    }

    /// CRC-32 of every column.
    var check: Int64 {
        let words = CRC32.bytes([UInt64(bitPattern: window.rows), UInt64(bitPattern: window.timeSumMs)])
        return Int64(CRC32.checksum(Array(date.utf8) + words + Array(settings.utf8) + [0] + Array(night.utf8)))
    }
}

/// A kept night as read: nil when there is none, or when it failed its check (`damaged`).
public struct SleepNightRead: Sendable {
    public var night: StoredSleepNight?
    public var damaged: Bool
}
