/// Published messages kept for resend requests (docs/contract.md, "Resending by seq").
///
/// A message the broker acknowledged stays in the outbox, marked `delivered = 1` (schema 10),
/// until it is older than `[store] keep_published_h` or more than `keep_published_max` are kept;
/// `prunePublished` then deletes the oldest in batches. Marking costs the SD card no more than
/// the delete it replaces (the flag takes no bytes in the record, so the row is rewritten in
/// place, and it leaves the same two partial indexes); the delete moves to a batch once an hour.
/// A consumer that missed a seq — the fleet archive, after a broker lost what it acknowledged —
/// asks the device for it on `<root>/selection/seq` and gets it as published.
extension Store {
    /// Marks acknowledged rows delivered: inside the caller's transaction.
    func markDelivered(_ ids: Set<Int64>) throws {
        for id in ids { try db.statement("UPDATE outbox SET delivered = 1 WHERE id = ?").bind(.integer(id)).run() }
    }

    /// Drops an older undelivered message of a "latest wins" topic (docs/contract.md, "Seq and
    /// superseding"). Delivered ones stay (they were published), and so do rows acknowledged
    /// and not yet marked, and — when messages are kept — rows already handed to the drain: the
    /// broker may have acknowledged one a moment before the drain reports it (seen under load:
    /// a delivered `status` superseded, then answered as not kept).
    func supersede(topic: String) throws {
        let undelivered = try db.statement(
            "SELECT id FROM outbox WHERE topic = ? AND supersedable = 1 AND delivered = 0 AND rejected_reason IS NULL"
        ).bind(.text(topic))
        var ids: [Int64] = []
        while try undelivered.step() { ids.append(undelivered.int64(0)) }
        undelivered.reset()
        for id in ids where !acknowledgedUndeleted.contains(id) && (!keepsPublished || id > handedOutMaxID) {
            try db.statement("DELETE FROM outbox WHERE id = ?").bind(.integer(id)).run()
        }
    }

    /// Deletes kept delivered messages created before `createdBeforeMs` (nil: none by age) and the
    /// oldest beyond `keepAtMost`, at most `limit` in one transaction; the number deleted (call
    /// again until 0). Rows are read oldest first by id, so a batch stops at the first young
    /// row instead of reading every kept message.
    public func prunePublished(createdBeforeMs: Int64?, keepAtMost: Int, limit: Int = 500) throws -> Int {
        let total = Int(try db.scalarInt("SELECT count(*) FROM outbox") ?? 0)
        let pending = Int(try db.scalarInt("SELECT count(*) FROM outbox WHERE rejected_reason IS NULL AND delivered = 0") ?? 0)
        let setAside = Int(try db.scalarInt("SELECT count(*) FROM outbox WHERE rejected_reason IS NOT NULL") ?? 0)
        var overCap = max(0, total - pending - setAside - keepAtMost)
        let oldest = try db.statement("SELECT id, created_ms FROM outbox WHERE delivered = 1 ORDER BY id LIMIT ?").bind(.integer(Int64(limit)))
        var doomed: [Int64] = []
        while try oldest.step() {
            let old = createdBeforeMs.map { oldest.int64(1) < $0 } ?? false
            guard old || overCap > 0 else { break }
            doomed.append(oldest.int64(0))
            overCap = max(0, overCap - 1)
        }
        oldest.reset()
        guard !doomed.isEmpty else { return 0 }
        try db.transaction {
            for id in doomed { try db.statement("DELETE FROM outbox WHERE id = ? AND delivered = 1").bind(.integer(id)).run() }
        }
        return doomed.count
    }
}
