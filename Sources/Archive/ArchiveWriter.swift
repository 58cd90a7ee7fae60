import Agent
import Foundation
import Logging
import Synchronization

/// Commits messages to PostgreSQL on the caller's thread — the MQTT network thread — and
/// returns only once the row is committed (or refused for its content).
///
/// That is what makes the archive exactly-once: libmosquitto queues a message's PUBACK before
/// handing it over, but with the network loop run by our own thread (`mosquitto_threaded_set`)
/// the PUBACK is written only on the loop's next turn, after this returns. So a message is
/// acknowledged only once it is in the archive; an archiver killed before that leaves it
/// unacknowledged in its persistent session, and the broker sends it again (a row already
/// there is ignored). While PostgreSQL is away this waits and retries, holding its place: the
/// broker queues for the archive's session, the devices publish on undisturbed.
final class ArchiveWriter: Sendable {
    private let conninfo: String
    private let logger: Logger
    /// The live connection, held for the length of each statement (`withDatabase`).
    private let database = Mutex<PostgresConnection?>(nil)
    private struct State {
        var counters = ArchiveCounters()
        var stopping = false
        var onNewDay: (@Sendable (ArchivedMessage) -> Void)?
    }
    private let state = Mutex(State())

    /// Called once a new `health/daily/<date>` row is stored: the day is asked of its device.
    var onNewDay: (@Sendable (ArchivedMessage) -> Void)? {
        get { state.withLock { $0.onNewDay } }
        set { state.withLock { $0.onNewDay = newValue } }
    }

    init(conninfo: String, logger: Logger) {
        self.conninfo = conninfo
        self.logger = logger
    }

    var snapshot: ArchiveCounters { state.withLock { $0.counters } }

    func count(_ update: (inout ArchiveCounters) -> Void) { state.withLock { update(&$0.counters) } }

    /// From now on, a wait for PostgreSQL ends the process instead of returning: returning
    /// would let the PUBACK of a message that is not stored go out.
    func stop() { state.withLock { $0.stopping = true } }

    /// Stores one message from `topic`; blocks while PostgreSQL is away.
    func receive(topic: String, payload: [UInt8], prefix: String) {
        count { $0.received += 1 }
        switch ArchivedMessage.parse(topic: topic, payload: payload, prefix: prefix) {
        case .failure(let rejection):
            reject(rejection, topic: topic)
        case .success(let message):
            _ = store(message)
        }
    }

    /// Writes `message` once (blocking while PostgreSQL is away); true when this call stored
    /// it, false when it was there already, nil when PostgreSQL refused it (counted).
    func store(_ message: ArchivedMessage) -> Bool? {
        let inserted: Bool
        do {
            inserted = try withDatabase { try ArchiveDatabase.insert(message, into: $0) }
        } catch {
            logger.warning("PostgreSQL refused a message", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
            reject(.database, topic: message.topic)
            return nil
        }
        let stored = state.withLock {
            inserted ? ($0.counters.stored += 1) : ($0.counters.duplicates += 1)
            return $0.counters.stored
        }
        if inserted, stored == killAfterCommits { killBeforeAcknowledging(message) }
        if inserted, message.kind == .daily { onNewDay?(message) }
        return inserted
    }

    /// Fault injection (`TestHooks.archiveKillAfterCommits`): the row is committed, its PUBACK
    /// not yet written (it goes out on the network loop's next turn, after `receive` returns).
    private let killAfterCommits = TestHooks.current.archiveKillAfterCommits
    private func killBeforeAcknowledging(_ message: ArchivedMessage) -> Never {
        logger.critical(
            "fault injection: SIGKILL after a commit, before its PUBACK",
            metadata: ["topic": "\(message.topic)", "seq": "\(message.seq)", "stored": "\(killAfterCommits ?? 0)"])
        kill(getpid(), SIGKILL)
        fatalError("SIGKILL did not end the process")
    }

    private func reject(_ rejection: ArchivedMessage.Rejection, topic: String) {
        let first = state.withLock {
            $0.counters.rejected[rejection, default: 0] += 1
            return $0.counters.rejected[rejection] == 1
        }
        // Requests to devices and the archive's own topics pass by all the time: debug only.
        let quiet: Set<ArchivedMessage.Rejection> = [.request, .archive]
        if quiet.contains(rejection) {
            logger.debug("not archived", metadata: ["reason": "\(rejection.rawValue)", "topic": "\(topic)"])
        } else {
            logger.log(level: first ? .warning : .info, "not archived", metadata: ["reason": "\(rejection.rawValue)", "topic": "\(topic)"])
        }
    }

    /// Runs `body` on a live connection, connecting (and creating the tables) first, waiting
    /// for PostgreSQL as long as it takes. Errors about the content are thrown; lost
    /// connections are retried. `body` runs with the connection's lock held: it must not call
    /// `withDatabase` again.
    func withDatabase<T: Sendable>(_ body: @Sendable (PostgresConnection) throws -> T) throws -> T {
        var backoff = 0.2
        var downSince: ContinuousClock.Instant?
        while true {
            do {
                let result = try database.withLock { connection in
                    try body(try Self.live(&connection, conninfo: conninfo))
                }
                if let downSince {
                    let waited = ContinuousClock.now - downSince
                    let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
                    count { $0.postgresDownS += seconds }
                    logger.notice("PostgreSQL is back; archiving again", metadata: ["waited_s": "\(String(format: "%.1f", seconds))"])
                }
                return result
            } catch let error as PostgresError where error.connectionLost {
                database.withLock { $0 = nil }
                if downSince == nil {
                    downSince = .now
                    count { $0.postgresOutages += 1 }
                    logger.warning("PostgreSQL unreachable; holding the message until it is back", metadata: ["error": "\(error)"])
                }
                if state.withLock({ $0.stopping }) {
                    logger.notice("stopping while PostgreSQL is away: the unstored message stays unacknowledged")
                    exit(0)
                }
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 2)
            }
        }
    }

    /// `connection` if libpq still calls it usable, else a new one (tables created) kept there.
    private static func live(_ connection: inout PostgresConnection?, conninfo: String) throws -> PostgresConnection {
        if let existing = connection, existing.isOK { return existing }
        let opened = try PostgresConnection(conninfo: conninfo)
        try ArchiveDatabase.prepare(opened)
        connection = opened
        return opened
    }
}
