import Foundation

/// A fixed-offset zone (POSIX-style `Etc/GMT±N`: `Etc/GMT-3` is three hours ahead of UTC) in
/// which it is now 12:xx. Data "ending now" that reaches back less than 12 hours then stays inside
/// one local day whatever the hour a test runs at: in UTC, a run just after midnight puts most of
/// it in yesterday (a fresh-clone run at 00:01 UTC found this in the Home Assistant check).
public enum MiddayZone {
    public static func at(_ date: Date = Date()) -> TimeZone {
        let utc = TimeZone(identifier: "UTC") ?? .current
        let hour = Calendar(identifier: .gregorian).dateComponents(in: utc, from: date).hour ?? 12
        let offset = ((12 - hour + 12) % 24 + 24) % 24 - 12  // -12…11 hours: local 12:xx
        return TimeZone(identifier: offset == 0 ? "UTC" : "Etc/GMT\(offset > 0 ? "-" : "+")\(abs(offset))") ?? utc
    }
}
