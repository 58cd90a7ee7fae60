import Foundation
import Logging
import Store

/// A day's heart-rate and location folds kept in the store (schema 12, docs/storage.md "Day
/// folds"). A day whose stored aggregate is stale (rows landed in it and the agent stopped before
/// publishing it again) is otherwise computed from all its rows: a strap's backlog of 100 000
/// notifications is most of a second on a Pi. The agent keeps the folds of a day a backlog landed
/// in once its rows stop, and a query resumes from them while the day's heart-rate and fix rows
/// are the ones folded (their number and time sum, from the time index) and the settings are the
/// same. A damaged row is logged and the day read from its rows. Steps and workouts are few rows
/// and read as they are.
extension DayAggregate {
    /// Raise when what a fold computes changes, so folds kept by an older build are not used.
    static let keptFormat = 1

    /// What is kept of a day.
    private struct KeptFolds: Codable {
        var heartRate: HeartRateAccumulator
        var location: LocationAccumulator
    }

    /// What kept folds must have been folded with to serve.
    static func keptSettings(_ settings: AggregateSettings) -> String {
        [
            "v\(keptFormat)", KeepAliveVersion.string, "tz=\(settings.zoneName)", "gap_ms=\(settings.gapLimitMs)",
            "zones=\(settings.zones.maxHR),\(settings.zones.restingHR)", "slot_s=\(settings.locationIntervalS)",
        ].joined(separator: "|")
    }

    /// The heart-rate and fix rows folded in.
    var foldedRows: [RowFingerprint] { [heartRateRows, fixRows] }

    /// The record that keeps this day's folds.
    func keptRecord(settings: AggregateSettings) -> StoredDayFold? {
        guard let json = try? Self.encoder.encode(KeptFolds(heartRate: heartRate, location: location)) else { return nil }
        return StoredDayFold(
            date: day.description, endMs: day.boundsMs.end, heartRate: heartRateRows, fixes: fixRows,
            settings: Self.keptSettings(settings), fold: String(decoding: json, as: UTF8.self))
    }

    /// `day` resumed from its kept folds if they still hold, with its steps and workouts read;
    /// nil when none are kept, or the day's rows (its heart-rate rows are `heartRate`, counted
    /// from the time index by the caller) or the settings changed since.
    static func kept(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader, heartRate: RowFingerprint) throws -> DayAggregate? {
        let read = try reader.read { try $0.dayFold(date: day.description) }
        if read.damaged {
            keptLog.error("a kept day fold failed its check; reading the day's rows", metadata: ["date": "\(day)"])
        }
        guard let kept = read.fold, kept.settings == keptSettings(settings) else { return nil }
        let bounds = day.boundsMs
        guard heartRate == kept.heartRate, try reader.read({ try $0.fixFingerprint(fromMs: bounds.start, toMs: bounds.end) }) == kept.fixes
        else { return nil }
        guard let folds = try? JSONDecoder().decode(KeptFolds.self, from: Data(kept.fold.utf8)) else {
            keptLog.error("a kept day fold is not readable; reading the day's rows", metadata: ["date": "\(day)"])
            return nil
        }
        var aggregate = DayAggregate(
            day: day, settings: settings, heartRate: folds.heartRate, heartRateRows: kept.heartRate, location: folds.location,
            fixRows: kept.fixes)
        try aggregate.readStepsAndWorkouts(reader)
        return aggregate
    }

    /// Doubles are written so they read back to the same bits (JSONEncoder's shortest form).
    private static var encoder: JSONEncoder { JSONEncoder() }

    private static let keptLog = Logger(label: "keepalive.health")
}
