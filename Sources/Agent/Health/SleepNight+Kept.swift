import Foundation
import Logging
import SleepStaging
import Store

/// Finished nights kept in the store (schema 11, docs/storage.md "Sleep nights"): a day whose
/// stored aggregate is stale (late rows, the agent stopped before it folded them) is computed
/// from its rows, but its night is classified again only when the night window's rows changed.
/// The kept night is served only while the window holds the same rows (their number and the sum
/// of their times) and the settings are the same, and only if its row passes its check; a
/// damaged one is logged and classified again.
extension SleepNight {
    /// Raise when the classification of a night changes, so nights kept by an older build are
    /// classified again.
    // 2: the heart-rate rule against a local baseline (2026-11-26); 3: an unknown age or sex given
    // to the network as its training mean, not as missing (2026-11-26).
    static let keptFormat = 3

    /// What a kept night must have been classified with to serve for `day`.
    static func keptSettings(_ day: LocalDay, _ settings: AggregateSettings) -> String {
        let subject = subject(day, settings)
        return [
            "v\(keptFormat)", KeepAliveVersion.string, WakeSleepClassifier.method,
            "age=\(subject.age.map(String.init) ?? "-")", "sex=\(subject.gender.map { "\($0.rawValue)" } ?? "-")",
            "hr_rule=\(settings.sleepHeartRateRule)", "tz=\(settings.zoneName)", "gap_ms=\(settings.gapLimitMs)",
        ].joined(separator: "|")
    }

    /// The record that keeps this night of `day`, classified from the window's rows counted in
    /// `fingerprint`; nil while the window is not over at `nowMs` or the night goes on.
    func keptRecord(
        _ day: LocalDay, settings: AggregateSettings, fingerprint: RowFingerprint, nowMs: Int64?
    ) -> StoredSleepNight? {
        let window = Self.window(of: day)
        guard nowMs.map({ $0 >= window.end }) ?? true, main?.inProgress != true,
            let json = try? JSONEncoder().encode(self)
        else { return nil }
        return StoredSleepNight(
            date: day.description, window: fingerprint, settings: Self.keptSettings(day, settings),
            night: String(decoding: json, as: UTF8.self))
    }

    /// `day`'s kept night if it still holds: classified with these settings from a window whose
    /// rows are `fingerprint` (the rows held, or counted from the store's time index).
    static func kept(_ day: LocalDay, settings: AggregateSettings, reader: StoreReader, fingerprint: RowFingerprint) throws -> SleepNight? {
        let read = try reader.read { try $0.sleepNight(date: day.description) }
        if read.damaged {
            keptLog.error("a kept sleep night failed its check; classifying the night again", metadata: ["date": "\(day)"])
        }
        guard let kept = read.night, kept.settings == keptSettings(day, settings) else { return nil }
        guard fingerprint == kept.window else { return nil }
        guard let night = try? JSONDecoder().decode(SleepNight.self, from: Data(kept.night.utf8)) else {
            keptLog.error("a kept sleep night is not readable; classifying the night again", metadata: ["date": "\(day)"])
            return nil
        }
        return night
    }

    private static let keptLog = Logger(label: "keepalive.sleep")
}

extension NightSamples {
    /// The rows held, counted as `heartRateFingerprint` counts the window's rows in the store.
    func fingerprint(windowStartMs: Int64) -> RowFingerprint {
        var rows: Int64 = 0
        var sum: Int64 = 0
        for series in bySensor.values {
            rows += Int64(series.count)
            for time in series.timesMs { sum += time - windowStartMs }
        }
        return RowFingerprint(rows: rows, timeSumMs: sum)
    }
}
