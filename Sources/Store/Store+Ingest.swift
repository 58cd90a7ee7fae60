import Logging

/// Sensor data in: one journal slot or one transaction per write, and the messages that report it.
extension Store {
    /// Stores fixes and heart-rate notifications and queues messages. Duplicates (same fix time;
    /// same sensor and time; same sensor and origin) are ignored, so a replay stores nothing.
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
    public func write(
        fixes: [StoredFix] = [], heartRates: [StoredHeartRate] = [], steps: [StoredStepRecord] = [], messages: [OutboxDraft] = [],
        workouts: [StoredWorkout] = []
    ) throws -> StoreWriteResult
    {
        try loadJournalIfNeeded()
        let seqBefore = seq
        let hasRows = !fixes.isEmpty || !heartRates.isEmpty || !steps.isEmpty
        var result = StoreWriteResult()
        var journaled = false
        if ring.takesWindows, hasRows, !ring.isDue() {
            let unseen = try unseenRows(fixes: fixes, heartRates: heartRates, steps: steps)
            if unseen.isEmpty {
                journaled = true
            } else if try ring.mayHold(unseen, newestAggregateEnd: newestAggregateEnd), try ring.append(unseen) {
                journaled = true
            }
            if journaled {
                result.fixesInserted = unseen.fixes.count
                result.heartRatesInserted = unseen.heartRates.count
                result.stepRecordsInserted = unseen.steps.count
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
                    result = try insertRows(fixes: fixes, heartRates: heartRates, steps: steps)
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
    func insertRows(fixes: [StoredFix], heartRates: [StoredHeartRate], steps: [StoredStepRecord]) throws -> StoreWriteResult {
        var result = StoreWriteResult()
        var freshness = AggregateFreshness(timeZone: dayTimeZone)
        for fix in fixes {
            guard let id = try insert(fix) else { continue }
            result.fixesInserted += 1
            freshness.added(fixID: id, timeMs: fix.timeMs)
        }
        for heartRate in heartRates {
            guard let id = try insert(heartRate) else { continue }
            result.heartRatesInserted += 1
            freshness.added(heartRateID: id, timeMs: heartRate.timeMs)
        }
        for record in steps {
            guard let id = try insert(record) else { continue }
            result.stepRecordsInserted += 1
            freshness.added(stepID: id, timeMs: record.timeMs)
        }
        try freshness.record(in: db)
        return result
    }

    /// The new row's id, or nil for a duplicate.
    func insert(_ fix: StoredFix) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO fix (ts_ms, received_ms, lat, lon, alt_hae, alt_msl, speed, track, climb, eph, epv,
                                       mode, satellites, time_source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .integer(fix.timeMs), .integer(fix.receivedMs), .real(fix.lat), .real(fix.lon), .double(fix.altHAE),
            .double(fix.altMSL), .double(fix.speed), .double(fix.track), .double(fix.climb), .double(fix.eph),
            .double(fix.epv), .integer(Int64(fix.mode)), .int(fix.satellites), .text(fix.timeSource)
        ).run()
        return db.changes > 0 ? db.lastInsertRowID : nil
    }

    /// The new notification's id, or nil for a duplicate.
    func insert(_ heartRate: StoredHeartRate) throws -> Int64? {
        try db.statement(
            """
            INSERT OR IGNORE INTO hr_sample (sensor, ts_ms, received_ms, bpm, contact, energy_kj, valid, raw, origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).bind(
            .text(heartRate.sensor), .integer(heartRate.timeMs), .integer(heartRate.receivedMs),
            .integer(Int64(heartRate.bpm)), .integer(Int64(heartRate.contact)), .int(heartRate.energyKJ),
            .integer(heartRate.valid ? 1 : 0), .blob(heartRate.raw), heartRate.origin.map { .integer($0) }
        ).run()
        guard db.changes > 0 else { return nil }
        let sampleID = db.lastInsertRowID
        // RR intervals describe the beats before the notification: the newest ends at its time.
        var end = heartRate.timeMs
        var stamps: [Int64] = Array(repeating: 0, count: heartRate.rrIntervals.count)
        for index in heartRate.rrIntervals.indices.reversed() {
            stamps[index] = end
            end -= Int64((Double(heartRate.rrIntervals[index]) * 1000 / 1024).rounded())
        }
        for (position, rr) in heartRate.rrIntervals.enumerated() {
            try db.statement("INSERT INTO rr_interval (sample_id, position, ts_ms, rr_1024) VALUES (?, ?, ?, ?)").bind(
                .integer(sampleID), .integer(Int64(position)), .integer(stamps[position]), .integer(Int64(rr))
            ).run()
        }
        return sampleID
    }
}
