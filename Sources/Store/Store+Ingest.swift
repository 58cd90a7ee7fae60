import Logging

/// Sensor data in: one journal slot or one transaction per write, and the messages that report it.
extension Store {
    /// Stores samples of any kinds and queues messages. Duplicates (a row named by the keys of
    /// one stored or pending, `SampleKind.keys`) are ignored, so a replay stores nothing.
    ///
    /// With the journal on, a window that fits one slot is written there (one page, synced) and
    /// the tables get it at the next fold; a fold that is due, or a window too large for a slot,
    /// folds the journal and writes the tables in one transaction (Store+Journal.swift). Messages
    /// are committed after the rows are stored: in the same transaction when the rows go to the
    /// tables, in a transaction of their own after the slot's sync when they went to the journal
    /// — a message is never stored before the samples written with it. When only the messages
    /// fail, `MessagesNotQueued` says what was stored.
    ///
    /// `workouts` are saved (`saveWorkout`) in the messages' transaction: a client told of a
    /// workout by one of them finds it in the store, and a crash keeps both or neither.
    @discardableResult
    public func write(_ rows: SampleBatch, messages: [OutboxDraft] = [], workouts: [StoredWorkout] = []) throws -> StoreWriteResult {
        try loadJournalIfNeeded()
        let seqBefore = seq
        let hasRows = !rows.isEmpty
        var result = StoreWriteResult()
        var journaled = false
        if ring.takesWindows, hasRows, !ring.isDue() {
            let unseen = try unseenRows(rows)
            if unseen.isEmpty {
                journaled = true
            } else if try ring.mayHold(unseen, newestAggregateEnd: newestAggregateEnd), try ring.append(unseen) {
                journaled = true
            }
            if journaled {
                for kindRows in unseen.rows.kinds { result.add(kindRows.count, of: kindRows.name) }
            }
        }
        let toTables = hasRows && !journaled
        guard toTables || !messages.isEmpty || !held.isEmpty || !workouts.isEmpty else { return result }
        var foldedNow = false
        let acknowledged = acknowledgedUndeleted
        do {
            let seqs = try db.transaction {
                if toTables {
                    if !ring.pending.isEmpty {
                        try fold(ring.pending)
                        try deleteAcknowledged(acknowledged)
                        foldedNow = true
                    }
                    result = try insertRows(rows)
                }
                var seqs: [Int64] = []
                // Held messages first: their seqs are older than any taken now.
                for message in held { try enqueue(held: message) }
                for message in messages { seqs.append(try enqueue(message)) }
                if !messages.isEmpty || !held.isEmpty {
                    try db.statement("UPDATE agent_state SET value = ? WHERE key = 'seq'").bind(.integer(seq)).run()
                }
                for workout in workouts { try saveWorkoutRow(workout) }
                return seqs
            }
            result.seqs = seqs
        } catch {
            seq = seqBefore
            // The rows are in the ring: a retry would find them there and count them as replays.
            if journaled { throw MessagesNotQueued(stored: result, underlying: error) }
            throw error
        }
        if foldedNow {
            ring.folded()
            acknowledgedUndeleted.subtract(acknowledged)
            makeRingAgainIfMoved()
        }
        if !held.isEmpty {
            logger.notice("queued the messages held while the store could not be written", metadata: ["seqs": "\(held.map(\.seq))"])
            held.removeAll()
        }
        return result
    }

    /// The rows into the indexed tables, with their days' aggregates told (schema 4): a window
    /// that skips the journal, or the journal's windows when folded.
    func insertRows(_ rows: SampleBatch) throws -> StoreWriteResult {
        var result = StoreWriteResult()
        var freshness = AggregateFreshness(timeZone: dayTimeZone)
        for kindRows in rows.kinds {
            let inserted = try kindRows.insert(into: db) { id, timeMs in freshness.added(id: id, of: kindRows.name, timeMs: timeMs) }
            result.add(inserted, of: kindRows.name)
        }
        try freshness.record(in: db)
        return result
    }
}
