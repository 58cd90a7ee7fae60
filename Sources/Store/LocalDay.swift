import Foundation

/// A calendar day in an IANA time zone, with its real bounds: 23 h or 25 h on DST days.
public struct LocalDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int
    public let timeZone: TimeZone
    /// Made once per value: creating a Calendar costs more than the date arithmetic done with it.
    private let calendar: Calendar

    /// Parses `YYYY-MM-DD` strictly (a real date, four-digit year); nil otherwise.
    public init?(_ text: String, timeZone: TimeZone) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day)
        guard components.isValidDate(in: calendar), year >= 1970 else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.timeZone = timeZone
        self.calendar = calendar
    }

    /// The local day containing `date`.
    public init(containing date: Date, timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.init(containing: date, calendar: calendar)
    }

    private init(containing date: Date, calendar: Calendar) {
        let components = calendar.dateComponents([.year, .month, .day], from: date)
        year = components.year ?? 1970
        month = components.month ?? 1
        day = components.day ?? 1
        timeZone = calendar.timeZone
        self.calendar = calendar
    }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    /// Local midnight that starts the day.
    public var start: Date {
        calendar.startOfDay(for: calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12)) ?? Date(timeIntervalSince1970: 0))
    }

    /// Local midnight that ends it (the next day's start).
    public var end: Date { next.start }

    public var next: LocalDay {
        let noon = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12)) ?? start
        return LocalDay(containing: calendar.date(byAdding: .day, value: 1, to: noon) ?? noon, calendar: calendar)
    }

    public var previous: LocalDay {
        let noon = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12)) ?? start
        return LocalDay(containing: calendar.date(byAdding: .day, value: -1, to: noon) ?? noon, calendar: calendar)
    }

    /// `[startMs, endMs)` in Unix milliseconds, for the store's day queries.
    public var boundsMs: (start: Int64, end: Int64) {
        (Int64(start.timeIntervalSince1970 * 1000), Int64(end.timeIntervalSince1970 * 1000))
    }

    public static func < (lhs: LocalDay, rhs: LocalDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public static func == (lhs: LocalDay, rhs: LocalDay) -> Bool {
        lhs.year == rhs.year && lhs.month == rhs.month && lhs.day == rhs.day && lhs.timeZone.identifier == rhs.timeZone.identifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(year)
        hasher.combine(month)
        hasher.combine(day)
        hasher.combine(timeZone.identifier)
    }
}
