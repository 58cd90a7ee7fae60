import CSQLite

/// The read queries, shared by the `Store` actor (the agent's writer connection) and
/// `StoreReader` (a read-only connection for queries and the command line).
extension SQLiteConnection {
    /// Fixes with `fromMs <= ts_ms < toMs`, in time order, streamed; `upTo` leaves out rows stored after a cursor was taken.
    func forEachFix(fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredFix) throws -> Void) throws {
        let statement = try self.statement(
            """
            SELECT ts_ms, received_ms, lat, lon, alt_hae, alt_msl, speed, track, climb, eph, epv, mode, satellites,
                   time_source, id
            FROM fix WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms
            """
        ).bind(.integer(fromMs), .integer(toMs), .integer(cursor?.fixID ?? .max))
        defer { statement.reset() }
        while try statement.step() { try body(Self.fix(from: statement)) }
    }

    func forEachHeartRate(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredHeartRate) throws -> Void
    ) throws {
        let statement = try self.statement(
            """
            SELECT s.sensor, s.ts_ms, s.received_ms, s.bpm, s.contact, s.energy_kj, s.valid, s.raw,
                   (SELECT group_concat(rr_1024) FROM (SELECT rr_1024 FROM rr_interval r WHERE r.sample_id = s.id
                                                       ORDER BY position)), s.id
            FROM hr_sample s WHERE s.ts_ms >= ? AND s.ts_ms < ? AND s.id <= ? ORDER BY s.ts_ms, s.sensor
            """
        ).bind(.integer(fromMs), .integer(toMs), .integer(cursor?.heartRateID ?? .max))
        defer { statement.reset() }
        while try statement.step() { try body(Self.heartRate(from: statement)) }
    }

    func rowCursor() throws -> RowCursor {
        RowCursor(
            fixID: try scalarInt("SELECT coalesce(max(id), 0) FROM fix") ?? 0,
            heartRateID: try scalarInt("SELECT coalesce(max(id), 0) FROM hr_sample") ?? 0,
            stepID: try scalarInt("SELECT coalesce(max(id), 0) FROM step_record") ?? 0)
    }

    func rows(after cursor: RowCursor, limit: Int) throws -> NewRows {
        var next = cursor
        // Ids are only handed out upwards while rows exist; an emptied table starts again at 1.
        let current = try rowCursor()
        if current.fixID < next.fixID { next.fixID = 0 }
        if current.heartRateID < next.heartRateID { next.heartRateID = 0 }
        if current.stepID < next.stepID { next.stepID = 0 }
        let fixStatement = try statement(
            """
            SELECT ts_ms, received_ms, lat, lon, alt_hae, alt_msl, speed, track, climb, eph, epv, mode, satellites,
                   time_source, id
            FROM fix WHERE id > ? ORDER BY id LIMIT ?
            """
        ).bind(.integer(next.fixID), .integer(Int64(limit)))
        defer { fixStatement.reset() }
        var fixes: [StoredFix] = []
        while try fixStatement.step() {
            fixes.append(Self.fix(from: fixStatement))
            next.fixID = fixStatement.int64(14)
        }
        let heartRateStatement = try statement(
            """
            SELECT s.sensor, s.ts_ms, s.received_ms, s.bpm, s.contact, s.energy_kj, s.valid, s.raw,
                   (SELECT group_concat(rr_1024) FROM (SELECT rr_1024 FROM rr_interval r WHERE r.sample_id = s.id
                                                       ORDER BY position)), s.id
            FROM hr_sample s WHERE s.id > ? ORDER BY s.id LIMIT ?
            """
        ).bind(.integer(next.heartRateID), .integer(Int64(limit)))
        defer { heartRateStatement.reset() }
        var heartRates: [StoredHeartRate] = []
        while try heartRateStatement.step() {
            heartRates.append(Self.heartRate(from: heartRateStatement))
            next.heartRateID = heartRateStatement.int64(9)
        }
        let stepStatement = try statement("SELECT sensor, kind, ts_ms, received_ms, raw, end_ms, covered_ms, steps, NULL, id FROM step_record WHERE id > ? ORDER BY id LIMIT ?")
            .bind(.integer(next.stepID), .integer(Int64(limit)))
        defer { stepStatement.reset() }
        var steps: [StoredStepRecord] = []
        while try stepStatement.step() {
            steps.append(Self.stepRecord(from: stepStatement))
            next.stepID = stepStatement.int64(9)
        }
        return NewRows(fixes: fixes, heartRates: heartRates, steps: steps, cursor: next)
    }

    /// Step records with `fromMs <= ts_ms < toMs`, in time order (then sensor), streamed.
    func forEachStepRecord(
        fromMs: Int64, toMs: Int64, upTo cursor: RowCursor? = nil, _ body: (StoredStepRecord) throws -> Void
    ) throws {
        let statement = try self.statement(
            """
            SELECT sensor, kind, ts_ms, received_ms, raw, end_ms, covered_ms, steps, NULL, id
            FROM step_record WHERE ts_ms >= ? AND ts_ms < ? AND id <= ? ORDER BY ts_ms, sensor, kind
            """
        ).bind(.integer(fromMs), .integer(toMs), .integer(cursor?.stepID ?? .max))
        defer { statement.reset() }
        while try statement.step() { try body(Self.stepRecord(from: statement)) }
    }

    /// Whether any fix, heart-rate notification or step record lies in `[fromMs, toMs)`.
    func hasRawData(fromMs: Int64, toMs: Int64) throws -> Bool {
        for sql: StaticString in [
            "SELECT EXISTS (SELECT 1 FROM fix WHERE ts_ms >= ? AND ts_ms < ?)",
            "SELECT EXISTS (SELECT 1 FROM hr_sample WHERE ts_ms >= ? AND ts_ms < ?)",
            "SELECT EXISTS (SELECT 1 FROM step_record WHERE ts_ms >= ? AND ts_ms < ?)",
        ] {
            let statement = try self.statement(sql).bind(.integer(fromMs), .integer(toMs))
            defer { statement.reset() }
            if try statement.step(), statement.int(0) != 0 { return true }
        }
        return false
    }

    func dayAggregate(date: String) throws -> StoredDayAggregate? {
        let statement = try self.statement(
            """
            SELECT date, tz, payload, final, updated_ms, published_payload, first_fix, last_fix,
                   coalesce(newest_fix_id > coalesce(built_fix_id, 0), 0) OR coalesce(newest_hr_id > coalesce(built_hr_id, 0), 0)
                   OR coalesce(newest_step_id > coalesce(built_step_id, 0), 0)
            FROM day_aggregate WHERE date = ?
            """
        ).bind(.text(date))
        defer { statement.reset() }  // a statement left mid-result holds its read transaction open
        guard try statement.step() else { return nil }
        return StoredDayAggregate(
            date: statement.text(0), tz: statement.text(1), payload: statement.text(2), final: statement.int(3) != 0,
            updatedMs: statement.int64(4), publishedPayload: statement.optionalText(5), firstFix: statement.optionalText(6),
            lastFix: statement.optionalText(7), isStale: statement.int(8) != 0)
    }

    /// Columns: sensor, kind, ts_ms, received_ms, raw, end_ms, covered_ms, steps, (unused), id.
    static func stepRecord(from statement: SQLiteStatement) -> StoredStepRecord {
        let sensor = statement.text(0)
        if statement.text(1) == StoredStepRecord.Kind.accelerometer.rawValue {
            return StoredStepRecord(
                sensor: sensor, firstSampleMs: statement.int64(2), lastSampleMs: statement.optionalInt(5).map(Int64.init) ?? statement.int64(2),
                receivedMs: statement.int64(3), coveredMs: Int64(statement.optionalInt(6) ?? 0), steps: statement.optionalInt(7) ?? 0)
        }
        return StoredStepRecord(sensor: sensor, timeMs: statement.int64(2), receivedMs: statement.int64(3), rsc: statement.blob(4))
    }

    static func fix(from statement: SQLiteStatement) -> StoredFix {
        StoredFix(
            timeMs: statement.int64(0), receivedMs: statement.int64(1), lat: statement.double(2),
            lon: statement.double(3), altHAE: statement.optionalDouble(4), altMSL: statement.optionalDouble(5),
            speed: statement.optionalDouble(6), track: statement.optionalDouble(7),
            climb: statement.optionalDouble(8), eph: statement.optionalDouble(9), epv: statement.optionalDouble(10),
            mode: statement.int(11), satellites: statement.optionalInt(12), timeSource: statement.text(13))
    }

    static func heartRate(from statement: SQLiteStatement) -> StoredHeartRate {
        let rr = statement.optionalText(8)?.split(separator: ",").compactMap { Int($0) } ?? []
        return StoredHeartRate(
            sensor: statement.text(0), timeMs: statement.int64(1), receivedMs: statement.int64(2),
            bpm: statement.int(3), contact: statement.int(4), energyKJ: statement.optionalInt(5),
            valid: statement.int(6) != 0, raw: statement.blob(7), rrIntervals: rr)
    }

}
