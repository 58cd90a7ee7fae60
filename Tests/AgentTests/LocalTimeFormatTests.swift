import Foundation
import Testing

@testable import Agent

/// `ISO8601.formatLocal` writes local times by hand (a `DateFormatter` pages in ICU's data): it
/// must write what the formatter wrote, in every kind of zone.
@Suite("Local times with their offset")
struct LocalTimeFormatTests {
    static func formatter(_ zone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssxxxxx"
        return formatter
    }

    @Test(
        "as DateFormatter's yyyy-MM-dd'T'HH:mm:ssxxxxx across DST changes, negative, half- and quarter-hour offsets",
        arguments: ["UTC", "Europe/Berlin", "America/New_York", "America/St_Johns", "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham", "Australia/Lord_Howe"])
    func sameAsDateFormatter(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        let formatter = Self.formatter(zone)
        // Every 37 minutes (and 0.7 s) over two years and a month: DST changes both ways.
        var mismatches: [String] = []
        for step in stride(from: -40_000.0, to: 2 * 365 * 24 * 60, by: 37.0) {
            let date = Date(timeIntervalSince1970: 1_767_225_600 + step * 60 + 0.7)
            let expected = formatter.string(from: date)
            let written = ISO8601.formatLocal(date, timeZone: zone)
            if written != expected, mismatches.count < 5 { mismatches.append("\(written) ≠ \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }
}
