import Foundation

/// The hour of real heart-rate bridge messages the repository ships (Tests/Fixtures/hr/nsr-60min.ndjson,
/// MIT-BIH normal sinus rhythm), stamped 08:00–09:00 UTC on the day it was made, moved to a day near
/// the run's. A fixture's absolute date ages: a week after it, a synchronised agent no longer
/// believes its stamps (`too_old`) and stores the receive time instead, and a test that passed on
/// the day it was written fails on every later one. Moved by whole days, each message keeps its
/// time of day, its spacing and its values.
public enum HeartRateFixture {
    /// The day the fixture's stamps carry.
    public static let recordedDay = "2026-11-21"

    /// The run's yesterday (UTC): 08:00–09:00 of it is past whatever the time of day, and well
    /// inside the 7 days the agent believes a bridge's stamps for.
    public static var yesterday: String { day(offset: -1) }

    /// The UTC day `offset` days from `now`, as YYYY-MM-DD.
    public static func day(offset: Int, from now: Date = Date()) -> String {
        let moved = now.addingTimeInterval(Double(offset) * 86_400)
        return moved.formatted(Date.ISO8601FormatStyle().year().month().day())
    }

    /// The fixture's lines with every stamp moved to `day`.
    public static func lines(on day: String) throws -> [String] {
        try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n").map {
            $0.replacingOccurrences(of: "\"ts\":\"\(recordedDay)T", with: "\"ts\":\"\(day)T")
        }
    }

    /// The fixture moved to `day`, written to a file in `directory` (for bridges that read a file).
    public static func file(on day: String, in directory: TemporaryDirectory) throws -> String {
        try directory.write("nsr-\(day).ndjson", try lines(on: day).joined(separator: "\n") + "\n")
    }

    /// How far the stamps moved, in ms: a stamp read off the fixture plus this is the one sent.
    public static func shiftMs(to day: String) -> Int64 {
        let style = Date.ISO8601FormatStyle()
        guard let from = try? style.parse("\(recordedDay)T00:00:00Z"), let to = try? style.parse("\(day)T00:00:00Z") else { return 0 }
        return Int64((to.timeIntervalSince(from) * 1000).rounded())
    }
}
