/// The durable outbox and its `seq` counter, which never goes back: consumers dedupe by it
/// across restarts and redeliveries.
extension Store {
    func enqueue(_ draft: OutboxDraft) throws -> Int64 {
        if draft.supersedable { try supersede(topic: draft.topic) }
        seq += 1
        try db.statement(
            """
            INSERT INTO outbox (seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .integer(seq), .text(draft.topic), .blob(draft.makePayload(seq)), .integer(Int64(draft.qos)),
            .integer(draft.retain ? 1 : 0), draft.contentType.map { .text($0) }, .int(draft.expiryS),
            .integer(draft.supersedable ? 1 : 0), .integer(clock.nowMs())
        ).run()
        return seq
    }

    /// Takes the next `seq` for a message that does not go through the outbox (the MQTT will),
    /// so the counter still never goes back.
    public func reserveSeq() throws -> Int64 {
        try db.transaction {
            seq += 1
            try db.statement("UPDATE agent_state SET value = ? WHERE key = 'seq'").bind(.integer(seq)).run()
        }
        return seq
    }

    public var currentSeq: Int64 { seq }

    /// A seq for a message sent live, outside the outbox, while the file cannot be written (disk
    /// full). It is kept in memory and saved with the next message that is stored, so the counter
    /// goes back after a restart only if no write at all succeeded in between.
    public func volatileSeq() -> Int64 {
        seq += 1
        return seq
    }

    /// Undelivered messages after `afterID`, oldest first: `limit` of them while there are that
    /// many (acknowledged rows awaiting their delete are skipped, not counted).
    public func pendingMessages(afterID: Int64, limit: Int) throws -> [OutboxEntry] {
        var entries: [OutboxEntry] = []
        var after = afterID
        while entries.count < limit {
            let wanted = limit - entries.count
            let statement = try db.statement(
                """
                SELECT id, seq, topic, payload, qos, retain, content_type, expiry_s, created_ms FROM outbox
                WHERE id > ? AND rejected_reason IS NULL AND delivered = 0 ORDER BY id LIMIT ?
                """
            ).bind(.integer(after), .integer(Int64(wanted)))
            var read = 0
            while try statement.step() {
                read += 1
                after = statement.int64(0)
                if acknowledgedUndeleted.contains(after) { continue }
                entries.append(
                    OutboxEntry(
                        id: after, seq: statement.int64(1), topic: statement.text(2), payload: statement.blob(3),
                        qos: statement.int(4), retain: statement.int(5) != 0, contentType: statement.optionalText(6),
                        expiryS: statement.optionalInt(7), createdMs: statement.int64(8)))
            }
            // Fewer rows than asked for: there are no more.
            if read < wanted { break }
        }
        handedOutMaxID = max(handedOutMaxID, entries.last?.id ?? 0)
        return entries
    }

    /// The broker has them: they leave the queue — deleted, or marked delivered and kept for
    /// resend requests (Store+Published.swift). Ids read before a `reopen` (another
    /// `fileGeneration`) name other messages in the new file and are ignored.
    ///
    /// With the ingest journal on, the rows are deleted with its next fold (within `fold_s`), in
    /// the fold's commit: a commit of their own, twice a minute for `status` and `health/today`,
    /// cost the SD card more than the fold itself. Meanwhile they are never sent again; after a
    /// crash they are, once (consumers dedupe by `seq`, as for any redelivery).
    /// Messages a previous run left (resent after a crash) are deleted at once: a one-off
    /// batch, and whoever looks at the file after a restart sees them leave as they are delivered.
    public func acknowledge(ids: [Int64], generation: Int? = nil) throws {
        guard !ids.isEmpty, generation.map({ $0 == fileGeneration }) ?? true else { return }
        acknowledgedUndeleted.formUnion(ids)
        guard !ring.takesWindows || acknowledgedUndeleted.count >= Self.acknowledgedHeldMax
            || ids.contains(where: { $0 <= outboxLeftByLastRun })
        else { return }
        try deleteAcknowledgedNow()
    }

    /// Past this many acknowledged rows (a backlog delivered) they are deleted at once.
    static let acknowledgedHeldMax = 1000

    /// Deletes the acknowledged rows in a transaction of their own.
    func deleteAcknowledgedNow() throws {
        guard !acknowledgedUndeleted.isEmpty else { return }
        let ids = acknowledgedUndeleted
        try db.transaction { try deleteAcknowledged(ids) }
        acknowledgedUndeleted.subtract(ids)
    }

    /// Inside the caller's transaction; the caller forgets `ids` once it commits. Kept for
    /// resend requests when the store keeps published messages (Store+Published.swift).
    func deleteAcknowledged(_ ids: Set<Int64>) throws {
        if keepsPublished { return try markDelivered(ids) }
        for id in ids { try db.statement("DELETE FROM outbox WHERE id = ?").bind(.integer(id)).run() }
    }

    /// The broker refused it (v5 reason ≥ 0x80): kept, out of the queue, for a person to look at.
    public func setAside(id: Int64, reason: String, generation: Int? = nil) throws {
        guard generation.map({ $0 == fileGeneration }) ?? true else { return }
        try db.statement("UPDATE outbox SET rejected_reason = ? WHERE id = ?").bind(.text(reason), .integer(id)).run()
    }

    public struct OutboxSummary: Sendable, Equatable {
        public var pending: Int
        public var oldestCreatedMs: Int64?
        public var setAside: Int
        /// Delivered messages kept for resend requests (Store+Published.swift).
        public var kept: Int = 0
    }

    /// Pending rows are read through their partial index (acknowledged rows awaiting their mark
    /// are left out); the kept ones are only counted, never read.
    public func outboxSummary() throws -> OutboxSummary {
        let statement = try db.statement("SELECT id, created_ms FROM outbox WHERE rejected_reason IS NULL AND delivered = 0")
        defer { statement.reset() }
        var summary = OutboxSummary(pending: 0, oldestCreatedMs: nil, setAside: 0)
        while try statement.step() {
            if acknowledgedUndeleted.contains(statement.int64(0)) { continue }
            summary.pending += 1
            summary.oldestCreatedMs = min(summary.oldestCreatedMs ?? .max, statement.int64(1))
        }
        summary.setAside = Int(try db.scalarInt("SELECT count(*) FROM outbox WHERE rejected_reason IS NOT NULL") ?? 0)
        if keepsPublished {
            let rows = Int(try db.scalarInt("SELECT count(*) FROM outbox") ?? 0)
            summary.kept = rows - summary.pending - summary.setAside
        }
        return summary
    }
}
