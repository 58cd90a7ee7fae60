/// The columns a fix and a step record are read from: each list written once, composed into
/// every SELECT that reads whole records (by time for a day, by id for new rows and for a
/// reopen's copy, the first and last fix…), and decoded by name, so a column added to one list
/// cannot shift what another query's decoder reads. A heart-rate notification is read with its
/// RR intervals joined in, one row per interval (`HeartRateKind.joinedColumns`,
/// StoreReads+Samples.swift).
extension StoredFix {
    /// Every column of `fix` a `StoredFix` is made of, and the row id.
    static let selection = "ts_ms, received_ms, lat, lon, alt_hae, alt_msl, speed, track, climb, eph, epv, mode, satellites, time_source, id"

    /// Fixes stored after an id, in the order they were stored: new rows, and a reopen's copy.
    static let afterID = "SELECT \(selection) FROM fix WHERE id > ? ORDER BY id LIMIT ?"

    struct Columns: ColumnLayout {
        let timeMs, receivedMs, lat, lon, altHAE, altMSL, speed, track, climb, eph, epv, mode, satellites, timeSource, id: Int32

        init(_ statement: SQLiteStatement) throws {
            timeMs = try statement.column(named: "ts_ms")
            receivedMs = try statement.column(named: "received_ms")
            lat = try statement.column(named: "lat")
            lon = try statement.column(named: "lon")
            altHAE = try statement.column(named: "alt_hae")
            altMSL = try statement.column(named: "alt_msl")
            speed = try statement.column(named: "speed")
            track = try statement.column(named: "track")
            climb = try statement.column(named: "climb")
            eph = try statement.column(named: "eph")
            epv = try statement.column(named: "epv")
            mode = try statement.column(named: "mode")
            satellites = try statement.column(named: "satellites")
            timeSource = try statement.column(named: "time_source")
            id = try statement.column(named: "id")
        }

        func fix(_ row: SQLiteStatement) -> StoredFix {
            StoredFix(
                timeMs: row.int64(timeMs), receivedMs: row.int64(receivedMs), lat: row.double(lat), lon: row.double(lon),
                altHAE: row.optionalDouble(altHAE), altMSL: row.optionalDouble(altMSL), speed: row.optionalDouble(speed),
                track: row.optionalDouble(track), climb: row.optionalDouble(climb), eph: row.optionalDouble(eph),
                epv: row.optionalDouble(epv), mode: row.int(mode), satellites: row.optionalInt(satellites),
                timeSource: row.text(timeSource))
        }

        func id(_ row: SQLiteStatement) -> Int64 { row.int64(id) }
    }
}

extension StoredStepRecord {
    /// Every column of `step_record` a `StoredStepRecord` is made of, and the row id.
    static let selection = "sensor, kind, ts_ms, received_ms, raw, end_ms, covered_ms, steps, origin, id"

    /// Records stored after an id, in the order they were stored: new rows, and a reopen's copy.
    static let afterID = "SELECT \(selection) FROM step_record WHERE id > ? ORDER BY id LIMIT ?"

    struct Columns: ColumnLayout {
        let sensor, kind, timeMs, receivedMs, raw, endMs, coveredMs, steps, origin, id: Int32

        init(_ statement: SQLiteStatement) throws {
            sensor = try statement.column(named: "sensor")
            kind = try statement.column(named: "kind")
            timeMs = try statement.column(named: "ts_ms")
            receivedMs = try statement.column(named: "received_ms")
            raw = try statement.column(named: "raw")
            endMs = try statement.column(named: "end_ms")
            coveredMs = try statement.column(named: "covered_ms")
            steps = try statement.column(named: "steps")
            origin = try statement.column(named: "origin")
            id = try statement.column(named: "id")
        }

        func stepRecord(_ row: SQLiteStatement) -> StoredStepRecord {
            let sensorName = row.text(sensor)
            if row.text(kind) == StoredStepRecord.Kind.accelerometer.rawValue {
                return StoredStepRecord(
                    sensor: sensorName, firstSampleMs: row.int64(timeMs), lastSampleMs: row.optionalInt(endMs).map(Int64.init) ?? row.int64(timeMs),
                    receivedMs: row.int64(receivedMs), coveredMs: Int64(row.optionalInt(coveredMs) ?? 0), steps: row.optionalInt(steps) ?? 0,
                    batchOrigins: StoredStepRecord.origins(packed: row.blob(raw)))
            }
            return StoredStepRecord(
                sensor: sensorName, timeMs: row.int64(timeMs), receivedMs: row.int64(receivedMs), rsc: row.blob(raw),
                origin: row.isNull(origin) ? nil : row.int64(origin))
        }

        func id(_ row: SQLiteStatement) -> Int64 { row.int64(id) }
    }
}
