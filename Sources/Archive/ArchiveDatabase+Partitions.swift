/// `archive_messages` partitioned by month of `received_at` (UTC), so that a year of a thousand
/// devices is twelve tables, a device-day query reads one of them, and retention is dropping a
/// month (docs/fleet.md, "Partitions").
///
/// A partitioned table's unique keys must contain its partition key, so (device, seq) alone can
/// no longer be a primary key: a redelivery in the next month would land in another partition.
/// Every row goes through `archive_insert` instead, which takes a transaction-level advisory lock
/// on (device, seq) — the same message from the other archiver waits for this one's commit — and
/// then looks for the key in every partition with a fresh snapshot (a volatile PL/pgSQL function
/// takes one per statement). One row per (device, seq), whatever month a copy arrives in.
extension ArchiveDatabase {
    static let partitionedTable = """
        CREATE TABLE IF NOT EXISTS archive_messages (
            device text NOT NULL, seq bigint NOT NULL, topic text NOT NULL, kind text NOT NULL,
            day date, payload text NOT NULL, received_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (device, seq, received_at)) PARTITION BY RANGE (received_at)
        """

    static let insertFunction = """
        CREATE OR REPLACE FUNCTION archive_insert(p_device text, p_seq bigint, p_topic text, p_kind text, p_day date, p_payload text)
        RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtext(p_device), (p_seq % 2147483647)::integer);
            IF EXISTS (SELECT 1 FROM archive_messages WHERE device = p_device AND seq = p_seq) THEN
                RETURN false;
            END IF;
            INSERT INTO archive_messages (device, seq, topic, kind, day, payload)
            VALUES (p_device, p_seq, p_topic, p_kind, p_day, p_payload);
            RETURN true;
        END $$
        """

    /// SQLSTATE of a row that fits no partition.
    static let noPartition = "23514"

    /// `archive_messages_YYYY_MM` for this month and the next (UTC), if missing: called when the
    /// archive starts and every status period, so the next month's table is there before it begins.
    static func createPartitions(_ connection: PostgresConnection) throws {
        try createPartitions(months: "SELECT date_trunc('month', now() AT TIME ZONE 'UTC') + n * interval '1 month' FROM generate_series(0, 1) n", connection)
    }

    /// A partition for each month (a `timestamp` at its first midnight, UTC) `monthsQuery` returns.
    /// The table names and bounds are PostgreSQL's own output (`to_char`), checked again here.
    static func createPartitions(months monthsQuery: String, _ connection: PostgresConnection) throws {
        let months = try connection.execute(
            "SELECT to_char(m, 'YYYY_MM'), to_char(m, 'YYYY-MM-DD'), to_char(m + interval '1 month', 'YYYY-MM-DD') FROM (\(monthsQuery)) AS months (m)"
        ).rows
        for month in months {
            guard month.count == 3, let suffix = month[0], let from = month[1].flatMap(validDate), let to = month[2].flatMap(validDate),
                suffix.allSatisfy({ $0.isNumber || $0 == "_" })
            else { continue }
            try once {
                try connection.execute(
                    """
                    CREATE TABLE IF NOT EXISTS archive_messages_\(suffix) PARTITION OF archive_messages
                    FOR VALUES FROM ('\(from) 00:00:00+00') TO ('\(to) 00:00:00+00')
                    """)
            }
        }
    }

    /// An archive made before the partitions (one `archive_messages` keyed by (device, seq)) is
    /// copied into the partitioned table in one transaction, under a lock that holds the other
    /// archivers back meanwhile; the time it takes grows with the archive (docs/fleet.md).
    static func migrateToPartitions(_ connection: PostgresConnection) throws {
        let relkind = "SELECT relkind FROM pg_class WHERE oid = to_regclass('archive_messages')"
        guard try connection.execute(relkind).rows.first?.first == "r" else { return }
        try connection.execute("BEGIN")
        do {
            try connection.execute("LOCK TABLE archive_messages IN ACCESS EXCLUSIVE MODE")
            // Another archiver may have migrated it while this one waited for the lock.
            guard try connection.execute(relkind).rows.first?.first == "r" else {
                try connection.execute("COMMIT")
                return
            }
            for statement in [
                "ALTER TABLE archive_messages RENAME TO archive_messages_unpartitioned",
                "ALTER INDEX IF EXISTS archive_messages_pkey RENAME TO archive_messages_unpartitioned_pkey",
                "ALTER INDEX IF EXISTS archive_messages_daily RENAME TO archive_messages_unpartitioned_daily",
                partitionedTable,
            ] {
                try connection.execute(statement)
            }
            try createPartitions(
                months: "SELECT DISTINCT date_trunc('month', received_at AT TIME ZONE 'UTC') FROM archive_messages_unpartitioned", connection)
            try connection.execute(
                """
                INSERT INTO archive_messages (device, seq, topic, kind, day, payload, received_at)
                SELECT device, seq, topic, kind, day, payload, received_at FROM archive_messages_unpartitioned
                """)
            try connection.execute("DROP TABLE archive_messages_unpartitioned")
            try connection.execute("COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
