/// The durable outbox and its `seq` counter, which never goes back: consumers dedupe by it
/// across restarts and redeliveries.
extension Store {
    func enqueue(_ draft: OutboxDraft) throws -> Int64 {
        if draft.supersedable {
            try db.statement("DELETE FROM outbox WHERE topic = ? AND supersedable = 1 AND rejected_reason IS NULL")
                .bind(.text(draft.topic)).run()
        }
        seq += 1
        try db.statement(
            """
            INSERT INTO outbox (seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .integer(seq), .text(draft.topic), .blob(draft.makePayload(seq)), .integer(Int64(draft.qos)),
            .integer(draft.retain ? 1 : 0), draft.contentType.map { .text($0) }, .int(draft.expiryS),
            .integer(draft.supersedable ? 1 : 0), .integer(Self.nowMs())
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

    /// Undelivered messages after `afterID`, oldest first.
    public func pendingMessages(afterID: Int64, limit: Int) throws -> [OutboxEntry] {
        let statement = try db.statement(
            """
            SELECT id, seq, topic, payload, qos, retain, content_type, expiry_s, created_ms FROM outbox
            WHERE id > ? AND rejected_reason IS NULL ORDER BY id LIMIT ?
            """
        ).bind(.integer(afterID), .integer(Int64(limit)))
        var entries: [OutboxEntry] = []
        while try statement.step() {
            entries.append(
                OutboxEntry(
                    id: statement.int64(0), seq: statement.int64(1), topic: statement.text(2), payload: statement.blob(3),
                    qos: statement.int(4), retain: statement.int(5) != 0, contentType: statement.optionalText(6),
                    expiryS: statement.optionalInt(7), createdMs: statement.int64(8)))
        }
        return entries
    }

    /// The broker has them: they leave the outbox. Ids read before a `reopen` (another
    /// `fileGeneration`) name other messages in the new file and are ignored.
    public func acknowledge(ids: [Int64], generation: Int? = nil) throws {
        guard !ids.isEmpty, generation.map({ $0 == fileGeneration }) ?? true else { return }
        try db.transaction {
            for id in ids { try db.statement("DELETE FROM outbox WHERE id = ?").bind(.integer(id)).run() }
        }
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
    }

    public func outboxSummary() throws -> OutboxSummary {
        let statement = try db.statement(
            """
            SELECT count(*) FILTER (WHERE rejected_reason IS NULL),
                   min(created_ms) FILTER (WHERE rejected_reason IS NULL),
                   count(*) FILTER (WHERE rejected_reason IS NOT NULL) FROM outbox
            """)
        defer { statement.reset() }
        _ = try statement.step()
        return OutboxSummary(
            pending: statement.int(0), oldestCreatedMs: statement.isNull(1) ? nil : statement.int64(1),
            setAside: statement.int(2))
    }
}
