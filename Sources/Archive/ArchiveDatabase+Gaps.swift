/// The seq gaps of each device: what the archive counts and asks the devices for.
///
/// A device's seqs are covered by its archived messages and by the ranges it said it does not
/// have (`archive_unfillable`: pruned, superseded before delivery, never queued). A gap is a run
/// of seqs between its first and last archived one that neither covers.
extension ArchiveDatabase {
    /// Every device's covered spans in seq order, each with the highest seq covered before it.
    private static let spans = """
        WITH spans AS (
            SELECT device, seq AS lo, seq AS hi FROM archive_messages
            UNION ALL SELECT device, from_seq, to_seq FROM archive_unfillable),
        ordered AS (
            SELECT device, lo, max(hi) OVER (PARTITION BY device ORDER BY lo, hi ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
            FROM spans),
        gaps AS (
            SELECT device, before + 1 AS from_seq, lo - 1 AS to_seq,
                   row_number() OVER (PARTITION BY device ORDER BY lo) AS n
            FROM ordered WHERE lo > before + 1)
        """

    /// The first `perDevice` gaps of each device, at most `limit` in all, oldest first.
    static func gapRanges(perDevice: Int, limit: Int, from connection: PostgresConnection) throws -> [(device: String, seqs: ClosedRange<Int64>)] {
        let rows = try connection.execute(
            spans + "SELECT device, from_seq, to_seq FROM gaps WHERE n <= $1 ORDER BY n, device LIMIT $2",
            [String(perDevice), String(limit)]).rows
        return rows.compactMap { row in
            guard row.count == 3, let device = row[0], let from = row[1].flatMap({ Int64($0) }), let to = row[2].flatMap({ Int64($0) }),
                from <= to
            else { return nil }
            return (device, from...to)
        }
    }

    /// Seqs missing per device: neither archived nor said to be gone by the device.
    static func gaps(from connection: PostgresConnection) throws -> ArchiveGaps {
        let devices = try scalar("SELECT count(DISTINCT device) FROM archive_messages", connection).flatMap { Int($0) } ?? 0
        let rows = try connection.execute(
            spans + "SELECT device, sum(to_seq - from_seq + 1) AS missing FROM gaps GROUP BY device ORDER BY missing DESC, device").rows
        let withGaps = rows.compactMap { row -> (String, Int64)? in
            guard row.count == 2, let device = row[0], let missing = row[1].flatMap({ Int64($0) }), missing > 0 else { return nil }
            return (device, missing)
        }
        let unfillable = try scalar("SELECT coalesce(sum(to_seq - from_seq + 1), 0) FROM archive_unfillable", connection)
            .flatMap { Int64($0) } ?? 0
        return ArchiveGaps(
            devices: devices, devicesWithGaps: withGaps.count, missing: withGaps.reduce(0) { $0 + $1.1 },
            unfillableTotal: unfillable, worst: withGaps.prefix(20).map { (device: $0.0, missing: $0.1) })
    }

    /// Keeps `seqs` of `device` as gone: not asked for again.
    static func storeUnfillable(device: String, seqs: ClosedRange<Int64>, into connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO archive_unfillable (device, from_seq, to_seq) VALUES ($1, $2, $3)
            ON CONFLICT (device, from_seq) DO UPDATE SET to_seq = greatest(archive_unfillable.to_seq, EXCLUDED.to_seq)
            """,
            [device, String(seqs.lowerBound), String(seqs.upperBound)])
    }

    private static func scalar(_ sql: String, _ connection: PostgresConnection) throws -> String? {
        try connection.execute(sql).rows.first?.first ?? nil
    }
}
