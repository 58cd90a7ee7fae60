import Foundation

/// Messages the file could not take (disk full, read-only): each keeps the seq it was given, is
/// sent live by the owner meanwhile, and is queued by the next write that succeeds — before
/// anything newer — unless its live copy was acknowledged first (`releaseHeld`). So a consumer
/// sees it once, with one seq, whether it went out live or later from the outbox.
extension Store {
    /// Gives each draft its seq (kept in memory, saved with the next write that succeeds) and
    /// holds it; returns the messages to send live.
    public func hold(_ drafts: [OutboxDraft]) -> [OutboxEntry] {
        let entries = drafts.map { draft in
            seq += 1
            return OutboxEntry(
                id: 0, seq: seq, topic: draft.topic, payload: draft.makePayload(seq), qos: draft.qos, retain: draft.retain,
                contentType: draft.contentType, expiryS: draft.expiryS, createdMs: clock.nowMs())
        }
        held += entries
        return entries
    }

    public var holdsMessages: Bool { !held.isEmpty }

    /// The messages held now, oldest first.
    public var heldMessages: [OutboxEntry] { held }

    /// The live copy of a held message was acknowledged: it need not be queued.
    public func releaseHeld(seq: Int64) {
        held.removeAll { $0.seq == seq }
    }

    func enqueue(held message: OutboxEntry) throws {
        try db.statement(
            """
            INSERT INTO outbox (seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)
            """
        ).bind(
            .integer(message.seq), .text(message.topic), .blob(message.payload), .integer(Int64(message.qos)),
            .integer(message.retain ? 1 : 0), message.contentType.map { .text($0) }, .int(message.expiryS),
            .integer(message.createdMs)
        ).run()
    }
}
