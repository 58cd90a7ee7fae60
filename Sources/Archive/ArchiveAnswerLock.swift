import Agent
import Foundation
import Logging
import Synchronization

/// Which archiver answers per-date queries: the one whose connection holds a PostgreSQL
/// session-level advisory lock (`ArchiveDatabase.answerLockKey`).
///
/// ejabberd 23.01 has no shared subscriptions, so every archiver receives every request to the
/// archive; without an agreement each would answer. PostgreSQL is the one thing all archivers
/// already share, and an advisory lock held by a session dies with that session: when the
/// answering archiver dies, its backend sees the socket close and the lock is free for the next
/// `period` of another archiver (over TCP to another host, a vanished peer is noticed by the
/// server's keepalive: `tcp_keepalives_*`, docs/fleet.md). Each answer checks in the same query
/// that this connection's backend still holds the lock (`ArchiveDatabase.answerHeld`), so a lock
/// lost to a reconnect is not answered on from memory.
final class ArchiveAnswerLock: Sendable {
    private let conninfo: String
    private let logger: Logger
    private let period: Duration
    /// The backend PID of the connection holding the lock, while this archiver holds it.
    private let holder = Mutex<Int32?>(nil)

    init(conninfo: String, clientID: String, logger: Logger, period: Duration = .seconds(1)) {
        // The holder is named in pg_stat_activity: who answers is one query away (key=value
        // conninfo only; a postgresql:// URI is left as given).
        let name = "application_name='keepalive archive \(clientID.filter { $0 != "'" && $0 != "\\" })'"
        self.conninfo = conninfo.hasPrefix("postgres://") || conninfo.hasPrefix("postgresql://") ? conninfo : "\(conninfo) \(name)"
        self.logger = logger
        self.period = period
    }

    /// The lock's backend PID while this archiver holds it, else nil (another answers).
    var holderPID: Int32? { holder.withLock { $0 } }

    /// Tries for the lock every `period` while not holding it, and checks the connection while
    /// holding it; a lost connection is a lost lock.
    func holdForever() async {
        var connection: PostgresConnection?
        while !Task.isCancelled {
            do {
                let live = try connection.flatMap { $0.isOK ? $0 : nil } ?? PostgresConnection(conninfo: conninfo)
                connection = live
                if holderPID == nil {
                    if let pid = try ArchiveDatabase.tryAnswerLock(live) {
                        holder.withLock { $0 = pid }
                        logger.notice("this archiver answers the archive's queries now", metadata: ["backend_pid": "\(pid)"])
                    }
                } else {
                    try live.execute("SELECT 1")
                }
            } catch {
                connection = nil
                if holder.withLock({ $0.take() }) != nil {
                    logger.warning("lost the answering lock with its PostgreSQL connection", metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(for: period)
        }
    }
}
