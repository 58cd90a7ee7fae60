import Agent
import Foundation
import Logging

/// The archive's tables in PostgreSQL and every statement on them.
///
/// `archive_messages` is keyed by (device, seq): a redelivery, or the same message from the
/// other archiver, is `ON CONFLICT DO NOTHING` — every (device, seq) is one row, whatever
/// arrives twice. `archive_days` keeps, per device and date, the device's own reply to a
/// per-date query, which the archive gives back for that day (docs/fleet.md).
enum ArchiveDatabase {
    static let schema = [
        partitionedTable,
        "CREATE INDEX IF NOT EXISTS archive_messages_daily ON archive_messages (device, day) WHERE kind = 'daily'",
        insertFunction,
        """
        CREATE TABLE IF NOT EXISTS archive_days (
            device text NOT NULL, day date NOT NULL, body text NOT NULL, source_seq bigint NOT NULL,
            fetched_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (device, day))
        """,
        // Seqs a device said it does not have (ArchiveGapFill): not asked for again.
        """
        CREATE TABLE IF NOT EXISTS archive_unfillable (
            device text NOT NULL, from_seq bigint NOT NULL, to_seq bigint NOT NULL,
            reported_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (device, from_seq))
        """,
    ]

    /// Creates what is missing (an unpartitioned `archive_messages` of an older archive is
    /// partitioned first), and this month's and next month's partitions; two archivers starting
    /// together may race on it, which the second survives (a unique violation on the catalog is
    /// retried once).
    static func prepare(_ connection: PostgresConnection) throws {
        try once { try migrateToPartitions(connection) }
        for statement in schema {
            try once { try connection.execute(statement) }
        }
        try createPartitions(connection)
    }

    /// Runs `body`, and again after an error about the content (a race on the catalog).
    static func once(_ body: () throws -> Void) throws {
        do { try body() } catch let error as PostgresError where !error.connectionLost { try body() }
    }

    /// Writes `message` once; true if this call stored it, false if it was there already. A
    /// month without its partition yet (an archiver that ran through a month's end without its
    /// status loop) gets it, and the row is written there.
    static func insert(_ message: ArchivedMessage, into connection: PostgresConnection) throws -> Bool {
        let parameters = [
            message.device, String(message.seq), message.topic, message.kind.rawValue, message.day.flatMap(validDate), message.payload,
        ]
        let statement = "SELECT archive_insert($1, $2::bigint, $3, $4, $5::date, $6)"
        do {
            return try connection.execute(statement, parameters).rows.first?.first == "t"
        } catch let error as PostgresError where error.sqlState == noPartition {
            try createPartitions(connection)
            return try connection.execute(statement, parameters).rows.first?.first == "t"
        }
    }

    /// Keeps a device's reply for `day`, unless one answering a newer aggregate is there.
    static func storeDay(device: String, day: String, body: String, sourceSeq: Int64, into connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO archive_days (device, day, body, source_seq) VALUES ($1, $2::date, $3, $4)
            ON CONFLICT (device, day) DO UPDATE SET body = EXCLUDED.body, source_seq = EXCLUDED.source_seq, fetched_at = now()
            WHERE archive_days.source_seq <= EXCLUDED.source_seq
            """,
            [device, day, body, String(sourceSeq)])
    }

    /// The archived reply for `device` on `day`, if any.
    static func day(device: String, day: String, from connection: PostgresConnection) throws -> String? {
        guard let date = validDate(day) else { return nil }
        return try connection.execute("SELECT body FROM archive_days WHERE device = $1 AND day = $2::date", [device, date]).rows.first?[0] ?? nil
    }

    /// Finished days whose newest aggregate has no reply archived for it yet (at most `limit`).
    static func daysToFetch(limit: Int, from connection: PostgresConnection) throws -> [(device: String, day: String, seq: Int64)] {
        let rows = try connection.execute(
            """
            SELECT m.device, m.day::text, max(m.seq) FROM archive_messages m
            LEFT JOIN archive_days d ON d.device = m.device AND d.day = m.day
            WHERE m.kind = 'daily' AND m.day IS NOT NULL
            GROUP BY m.device, m.day, d.source_seq HAVING d.source_seq IS NULL OR d.source_seq < max(m.seq)
            LIMIT $1
            """, [String(limit)]).rows
        return rows.compactMap { row in
            guard row.count == 3, let device = row[0], let day = row[1], let seq = row[2].flatMap({ Int64($0) }) else { return nil }
            return (device, day, seq)
        }
    }

    /// The advisory lock whose holder answers the archive's queries (`ArchiveAnswerLock`): one
    /// bigint key, seen in `pg_locks` as classid 0, objid this, objsubid 1.
    static let answerLockKey: Int64 = 0x6B61_0001

    /// Takes the answering lock on `connection` if free; its backend PID when taken, else nil.
    static func tryAnswerLock(_ connection: PostgresConnection) throws -> Int32? {
        let row = try connection.execute("SELECT pg_try_advisory_lock($1::bigint), pg_backend_pid()", [String(answerLockKey)]).rows.first
        guard let row, row.count == 2, row[0] == "t", let pid = row[1].flatMap({ Int32($0) }) else { return nil }
        return pid
    }

    /// Whether the backend `pid` holds the answering lock right now.
    static func answerHeld(by pid: Int32, from connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = $1::bigint
            AND objsubid = 1 AND pid = $2
            """, [String(answerLockKey), String(pid)]).rows.first?.first == "1"
    }

    /// `YYYY-MM-DD` with a plausible month and day, else nil (a topic level is not trusted).
    static func validDate(_ text: String) -> String? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        return text
    }
}
