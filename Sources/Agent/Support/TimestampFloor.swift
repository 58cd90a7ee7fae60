import Foundation

/// The earliest time a measurement stamp can be believed: this release's date. A bridge whose
/// own clock was never set (an ESP32 or a Pi booting at 1970 or 2000) stamps measurements years
/// in the past; while the agent's clock is unsynchronised it cannot tell that from a backlog by
/// comparing clocks, but nothing this agent receives can have been measured before the agent
/// was written. Bumped with each release (a stale floor only lets more bad stamps through).
enum TimestampFloor {
    /// 2026-11-01T00:00:00Z.
    static let date = Date(timeIntervalSince1970: 1_793_491_200)
}
