import Agent
import Foundation

/// What the archive has done since it started, published in its status (never silent).
struct ArchiveCounters: Sendable {
    var received = 0
    /// Rows written: each (device, seq) for the first time.
    var stored = 0
    /// Messages whose (device, seq) was already there: a redelivery, or the other archiver's.
    var duplicates = 0
    var rejected: [ArchivedMessage.Rejection: Int] = [:]
    /// Times PostgreSQL went away, and how long in all the archive waited for it.
    var postgresOutages = 0
    var postgresDownS = 0.0
    /// Days asked of devices (`selection/date`), and their replies kept.
    var daysRequested = 0
    var daysStored = 0
    var dayRepliesRefused = 0
    /// Per-date queries answered by the archive, and those that found no archived day.
    var queriesAnswered = 0
    var queriesNotFound = 0
    /// Queries left to the archiver holding the answering lock (`ArchiveAnswerLock`).
    var queriesLeft = 0
    /// Resend requests sent to devices for gaps; seqs stored from their replies (not there
    /// before), seqs they said they no longer have, and replies refused (an error reply, a
    /// message that is not the device's or not the seq it claims).
    var gapRequests = 0
    var gapsFilled = 0
    var gapsUnfillable: Int64 = 0
    var gapRepliesRefused = 0

    /// `reachable`: whether PostgreSQL answered the status's own check just now.
    func json(gaps: ArchiveGaps?, reachable: Bool) -> JSONValue {
        let rejections = ArchivedMessage.Rejection.allCases.map { ($0.rawValue, JSONValue.int(Int64(rejected[$0, default: 0]))) }
        return .object([
            ("received", .int(Int64(received))), ("stored", .int(Int64(stored))), ("duplicates", .int(Int64(duplicates))),
            ("rejected", .object(rejections)),
            ("postgres", .object([
                ("state", .string(reachable ? "up" : "down")), ("outages", .int(Int64(postgresOutages))),
                ("down_s", .number(postgresDownS, digits: 1)),
            ])),
            ("days", .object([
                ("requested", .int(Int64(daysRequested))), ("stored", .int(Int64(daysStored))), ("refused", .int(Int64(dayRepliesRefused))),
            ])),
            ("queries", .object([("answered", .int(Int64(queriesAnswered))), ("not_found", .int(Int64(queriesNotFound))),
                ("left_to_other", .int(Int64(queriesLeft))),])),
            ("gaps", .object((gaps?.members ?? []) + [
                ("requested", .int(Int64(gapRequests))), ("filled", .int(Int64(gapsFilled))), ("unfillable", .int(gapsUnfillable)),
                ("refused", .int(Int64(gapRepliesRefused))),
            ])),
        ])
    }
}

/// Seqs missing between each device's first and last archived seq that the device has not (yet)
/// said it does not have: what the archive still asks for (ArchiveGapFill). Seqs a device took
/// and never published (a superseded `status`, Home Assistant configs: docs/contract.md) or no
/// longer keeps are `unfillable_total` once it said so.
struct ArchiveGaps: Sendable {
    var devices: Int
    var devicesWithGaps: Int
    var missing: Int64
    var unfillableTotal: Int64
    /// The devices missing the most, at most 20.
    var worst: [(device: String, missing: Int64)]

    var members: [(String, JSONValue)] {
        [
            ("devices", .int(Int64(devices))), ("devices_with_gaps", .int(Int64(devicesWithGaps))), ("missing", .int(missing)),
            ("unfillable_total", .int(unfillableTotal)), ("worst", .object(worst.map { ($0.device, JSONValue.int($0.missing)) })),
        ]
    }
}
