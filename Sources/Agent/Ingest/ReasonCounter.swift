import Foundation
import Logging
import Synchronization

/// Counts events by reason — samples dropped, bridge stamps not believed — for `status`, where
/// every reason is always listed (zeros included), and logs them rate-limited: the first of each
/// reason at once, then at most one line per reason a minute with the count since.
///
/// Thread-safe: transport threads, the MQTT network thread and the services all count here.
final class ReasonCounter: Sendable {
    let name: String
    let reasons: [String]
    private let message: String
    private let quiet: Set<String>
    private let logger: Logger
    private let logInterval: UInt64
    private struct Tally {
        var counts: [String: Int]
        /// Per reason: when it was last logged (uptime ns) and its count then.
        var logged: [String: (at: UInt64, count: Int)] = [:]
    }
    private let tally: Mutex<Tally>

    /// `message` is the log line, e.g. "heart-rate messages dropped"; `quiet` reasons are
    /// expected (thinning to the configured rate) and logged at debug level only.
    init(name: String, reasons: [String], message: String, quiet: Set<String> = [], logger: Logger, logIntervalS: Double = 60) {
        self.name = name
        self.reasons = reasons
        self.message = message
        self.quiet = quiet
        self.logger = logger
        logInterval = UInt64(logIntervalS * 1e9)
        tally = Mutex(Tally(counts: Dictionary(uniqueKeysWithValues: reasons.map { ($0, 0) })))
    }

    /// Adds `amount` to `reason` (one of `reasons`); `detail` is logged with it.
    func count(_ reason: String, _ amount: Int = 1, detail: @autoclosure () -> String = "") {
        guard amount > 0 else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let due: (total: Int, since: Int)? = tally.withLock { tally in
            let total = (tally.counts[reason] ?? 0) + amount
            tally.counts[reason] = total
            if let last = tally.logged[reason], now < last.at + logInterval { return nil }
            let since = total - (tally.logged[reason]?.count ?? 0)
            tally.logged[reason] = (now, total)
            return (total, since)
        }
        guard let due else { return }
        var metadata: Logger.Metadata = [name: "\(reason)", "total": "\(due.total)", "new": "\(due.since)"]
        let text = detail()
        if !text.isEmpty { metadata["example"] = "\(text)" }
        logger.log(level: quiet.contains(reason) ? .debug : .notice, "\(message)", metadata: metadata)
    }

    func value(_ reason: String) -> Int { tally.withLock { $0.counts[reason] ?? 0 } }

    /// Every reason with its count, in `reasons` order.
    var snapshot: [(String, Int)] { tally.withLock { tally in reasons.map { ($0, tally.counts[$0] ?? 0) } } }

    var total: Int { tally.withLock { $0.counts.values.reduce(0, +) } }
}

/// The drop and stamp counters of both sensors, shared by the readers, the services, the
/// sample writer and `status`.
struct IngestCounters: Sendable {
    let gpsDropped: ReasonCounter
    let heartRateDropped: ReasonCounter
    /// Notifications stored with the receive time because the bridge's stamp was not believed.
    let heartRateReceiveTimeUsed: ReasonCounter

    enum GPSDrop {
        /// A fix with a position that is not finite or out of range.
        static let rejectedFix = "rejected_fix"
        /// A fix without GPS time while the system clock is unsynchronised: no clock to trust.
        static let noTime = "no_time"
        /// Thinned to `gps.max_rate_hz` (the most accurate fix of each interval is kept).
        static let thinned = "thinned"
        /// A fix with the time of one already stored.
        static let duplicate = "duplicate"
        /// gpsd sent faster than the agent took fixes: its queue was full.
        static let queueOverflow = "queue_overflow"
        /// The store could not be written for so long that fixes waiting in memory hit the bound.
        static let memoryLimit = "memory_limit"
        static let all = [rejectedFix, noTime, thinned, duplicate, queueOverflow, memoryLimit]
    }

    enum HeartRateDrop {
        /// Not a bridge message: not JSON, a field missing or wrong, an invalid 0x2A37 value.
        static let malformed = "malformed"
        /// Longer than `hr.max_line_bytes`.
        static let tooLong = "too_long"
        /// A notification already stored (same sensor and time): a replay.
        static let duplicate = "duplicate"
        /// UDP datagrams the kernel or the agent had no room for (UDP cannot push back).
        static let udpOverflow = "udp_overflow"
        /// Messages already acknowledged to the broker that found no room in memory.
        static let memoryLimit = "memory_limit"
        static let all = [malformed, tooLong, duplicate, udpOverflow, memoryLimit]
    }

    enum ReceiveTimeUsed {
        /// The message had no readable `ts`.
        static let noStamp = "no_stamp"
        /// The stamp is earlier than `TimestampFloor` (a bridge clock that never got set).
        static let beforeFloor = "before_floor"
        /// More than a minute ahead of the synchronised system clock.
        static let ahead = "ahead"
        /// More than 7 days behind the synchronised system clock.
        static let tooOld = "too_old"
        static let all = [noStamp, beforeFloor, ahead, tooOld]
    }

    init(logger: Logger) {
        gpsDropped = ReasonCounter(name: "reason", reasons: GPSDrop.all, message: "GPS fixes dropped", quiet: [GPSDrop.thinned], logger: logger)
        heartRateDropped = ReasonCounter(name: "reason", reasons: HeartRateDrop.all, message: "heart-rate messages dropped", logger: logger)
        heartRateReceiveTimeUsed = ReasonCounter(
            name: "reason", reasons: ReceiveTimeUsed.all, message: "bridge timestamps not believed; receive time used", logger: logger)
    }
}
