import Foundation
import Testing
import TestKit
@testable import Archive

/// `archive_messages` partitioned by month (docs/fleet.md, "Partitions"), on a real PostgreSQL:
/// an archive made before the partitions is migrated with its rows; this month's and the next
/// month's partitions are made ahead; a (device, seq) is one row whatever month a copy arrives
/// in, also when two archivers write it at the same moment; a device-day query reads one
/// partition (EXPLAIN); dropping a month is the retention.
extension FleetSuites {
    @Suite struct ArchivePartitionTests {
        @Test("the archive is partitioned by month, one row per (device, seq), a device-day reads one partition") func partitionedByMonth() async throws {
            let directory = try TemporaryDirectory("fleet-partitions")
            chmod(directory.path, 0o755)
            let postgres = TestPostgres(directory: directory.file("pg"), port: Ports.free())
            try await postgres.create()
            try await postgres.start()
            do {
                try await check(postgres)
                try? await postgres.stop()
            } catch {
                try? await postgres.stop()
                throw error
            }
        }

        private func check(_ postgres: TestPostgres) async throws {
            // The archive as it was before the partitions: one table keyed by (device, seq).
            _ = try await postgres.query("""
                CREATE TABLE archive_messages (
                    device text NOT NULL, seq bigint NOT NULL, topic text NOT NULL, kind text NOT NULL,
                    day date, payload text NOT NULL, received_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (device, seq));
                CREATE INDEX archive_messages_daily ON archive_messages (device, day) WHERE kind = 'daily';
                INSERT INTO archive_messages VALUES
                    ('pi-a', 1, 'keepalive/pi-a/status', 'status', NULL, '{"seq":1}', '2026-01-15 10:00:00+00'),
                    ('pi-a', 2, 'keepalive/pi-a/status', 'status', NULL, '{"seq":2}', '2026-01-15 23:59:59+00'),
                    ('pi-a', 3, 'keepalive/pi-a/status', 'status', NULL, '{"seq":3}', '2026-02-03 08:00:00+00');
                """)
            let connection = try PostgresConnection(conninfo: postgres.conninfo)
            try ArchiveDatabase.prepare(connection)
            try ArchiveDatabase.prepare(connection)  // twice: nothing left to do the second time

            #expect(try await postgres.query("SELECT relkind FROM pg_class WHERE relname = 'archive_messages'") == [["p"]])
            let partitions = Set(try await postgres.query(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'archive_messages'::regclass"
            ).compactMap(\.first))
            let ahead = try await postgres.query("""
                SELECT to_char(date_trunc('month', now() AT TIME ZONE 'UTC') + n * interval '1 month', '"archive_messages_"YYYY_MM')
                FROM generate_series(0, 1) n
                """).compactMap(\.first)
            #expect(partitions.isSuperset(of: ["archive_messages_2026_01", "archive_messages_2026_02"] + ahead), "\(partitions)")
            #expect(try await postgres.query("SELECT device, seq FROM archive_messages ORDER BY seq") == [["pi-a", "1"], ["pi-a", "2"], ["pi-a", "3"]])

            // One row per (device, seq): a January seq arriving again now (another month) is not
            // written; a new one is, once.
            func message(_ seq: Int64) -> ArchivedMessage {
                ArchivedMessage(device: "pi-a", seq: seq, topic: "keepalive/pi-a/status", kind: .status, day: nil, payload: "{\"seq\":\(seq)}")
            }
            #expect(try ArchiveDatabase.insert(message(1), into: connection) == false)
            #expect(try ArchiveDatabase.insert(message(4), into: connection) == true)
            #expect(try ArchiveDatabase.insert(message(4), into: connection) == false)

            // Two archivers writing the same message at once: the second waits for the first's
            // commit (its advisory lock on the key), then finds the row.
            let first = try ManagedProcess(name: "psql first", executable: "/usr/bin/psql", arguments: [
                postgres.conninfo, "-At", "-c",
                "BEGIN; SELECT archive_insert('pi-a', 5, 'keepalive/pi-a/status', 'status', NULL, '{\"seq\":5}'); SELECT pg_sleep(2); COMMIT;",
            ])
            try await Wait.until(timeout: 10, "the first writer to hold the key's lock") {
                try syncQuery(postgres, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted").first?.first == "1"
            }
            #expect(try ArchiveDatabase.insert(message(5), into: connection) == false, "the second writer stored the key the first holds")
            #expect(await first.waitForExit(timeout: 10) == 0, "\(first.text)")
            #expect(first.text.contains("\nt") || first.text.hasPrefix("t"), "the first writer did not store it: \(first.text)")
            #expect(try await postgres.query("SELECT count(*) FROM archive_messages WHERE device = 'pi-a' AND seq = 5") == [["1"]])

            // A device's day reads one partition.
            let plan = try await postgres.query("""
                EXPLAIN SELECT seq, payload FROM archive_messages WHERE device = 'pi-a'
                AND received_at >= '2026-01-15 00:00:00+00' AND received_at < '2026-01-16 00:00:00+00'
                """).map { $0.joined() }.joined(separator: "\n")
            let scanned = Set(partitions.filter { plan.contains($0) })
            #expect(scanned == ["archive_messages_2026_01"], "the device-day query reads \(scanned):\n\(plan)")

            // Retention: a month dropped, the others stay.
            _ = try await postgres.query("DROP TABLE archive_messages_2026_01")
            #expect(try await postgres.query("SELECT seq FROM archive_messages ORDER BY seq") == [["3"], ["4"], ["5"]])
        }
    }
}
