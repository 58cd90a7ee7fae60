import Foundation
import Supervision
import Synchronization

/// A calendar day in an IANA time zone, with its real bounds: 23 h or 25 h on DST days.
public struct LocalDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int
    public let timeZone: TimeZone
    /// From a cache per zone: creating a Calendar costs more than the date arithmetic done with it.
    private let calendar: Calendar

    /// Parses `YYYY-MM-DD` strictly (a real date, four-digit year); nil otherwise.
    public init?(_ text: String, timeZone: TimeZone) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            year >= 1970, (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year)
        else { return nil }
        self.init(year: year, month: month, day: day, calendar: Self.calendar(in: timeZone))
    }

    private init(year: Int, month: Int, day: Int, calendar: Calendar) {
        self.year = year
        self.month = month
        self.day = day
        timeZone = calendar.timeZone
        self.calendar = calendar
    }

    /// Days in a month of the (proleptic) Gregorian calendar.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The local day containing `date`.
    public init(containing date: Date, timeZone: TimeZone) {
        self.init(containing: date, calendar: Self.calendar(in: timeZone))
    }

    /// The Gregorian calendar of `timeZone`, made once per zone: a device has one or two.
    private static func calendar(in timeZone: TimeZone) -> Calendar {
        calendars.withLock { cache in
            if let calendar = cache[timeZone] { return calendar }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            if cache.count < 16 { cache[timeZone] = calendar }
            return calendar
        }
    }

    private static let calendars = Mutex<[TimeZone: Calendar]>([:])

    private init(containing date: Date, calendar: Calendar) {
        let components = calendar.dateComponents([.year, .month, .day], from: date)
        year = components.year ?? 1970
        month = components.month ?? 1
        day = components.day ?? 1
        timeZone = calendar.timeZone
        self.calendar = calendar
    }

    public var description: String {
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }

    /// Local midnight that starts the day.
    public var start: Date {
        calendar.startOfDay(for: calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12)) ?? Date(timeIntervalSince1970: 0))
    }

    /// Local midnight that ends it (the next day's start).
    public var end: Date { next.start }

    /// Calendar arithmetic by hand: a day's neighbours do not depend on its time zone.
    public var next: LocalDay {
        if day < Self.daysIn(month: month, year: year) { return LocalDay(year: year, month: month, day: day + 1, calendar: calendar) }
        if month < 12 { return LocalDay(year: year, month: month + 1, day: 1, calendar: calendar) }
        return LocalDay(year: year + 1, month: 1, day: 1, calendar: calendar)
    }

    public var previous: LocalDay {
        if day > 1 { return LocalDay(year: year, month: month, day: day - 1, calendar: calendar) }
        if month > 1 { return LocalDay(year: year, month: month - 1, day: Self.daysIn(month: month - 1, year: year), calendar: calendar) }
        return LocalDay(year: year - 1, month: 12, day: 31, calendar: calendar)
    }

    /// `[startMs, endMs)` in Unix milliseconds, for the store's day queries. Remembered per day:
    /// the calendar arithmetic behind it (four conversions) cost more than the rest of a quick
    /// query's answer, and the same few days are asked for all day long.
    public var boundsMs: (start: Int64, end: Int64) {
        if let known = Self.bounds.withLock({ $0[self] }) { return known }
        let computed = (start.unixMs, end.unixMs)
        Self.bounds.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[self] = computed
        }
        return computed
    }

    private static let bounds = Mutex<[LocalDay: (start: Int64, end: Int64)]>([:])

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
