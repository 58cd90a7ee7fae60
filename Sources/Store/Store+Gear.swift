/// Shoes and other gear (schema 6), and the workouts credited to them.
extension Store {
    /// Registers a pair, or changes the name and limits of one already registered (its credits stay).
    public func addGear(id: String, name: String, startKm: Double, limitKm: Double?, nowMs: Int64) throws {
        try db.statement(
            """
            INSERT INTO gear (id, name, start_km, limit_km, created_ms) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, start_km = excluded.start_km, limit_km = excluded.limit_km
            """
        ).bind(.text(id), .text(name), .real(startKm), .double(limitKm), .integer(nowMs)).run()
    }

    /// Makes `id` the pair new runs are credited to (and no other).
    public func selectGear(id: String) throws {
        try db.transaction {
            try db.execute("UPDATE gear SET selected = 0 WHERE selected = 1")
            try db.statement("UPDATE gear SET selected = 1 WHERE id = ?").bind(.text(id)).run()
        }
    }

    /// A retired pair keeps its history but is no longer selected.
    public func retireGear(id: String) throws {
        try db.statement("UPDATE gear SET retired = 1, selected = 0 WHERE id = ?").bind(.text(id)).run()
    }

    /// Credits a workout's distance to a pair, keyed by the workout: a second credit of the same
    /// workout changes nothing, to another pair moves it.
    public func credit(workoutID: String, to gearID: String, km: Double, workoutEndMs: Int64, nowMs: Int64) throws -> GearCreditOutcome {
        try db.transaction {
            let previous = try reads.gearCredit(workoutID: workoutID)
            if let previous, previous.gearID == gearID, abs(previous.km - km) < 1e-9 { return .unchanged }
            try db.statement(
                """
                INSERT INTO gear_credit (workout_id, gear_id, km, workout_end_ms, credited_ms) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (workout_id) DO UPDATE SET gear_id = excluded.gear_id, km = excluded.km,
                                                      workout_end_ms = excluded.workout_end_ms, credited_ms = excluded.credited_ms
                """
            ).bind(.text(workoutID), .text(gearID), .real(km), .integer(workoutEndMs), .integer(nowMs)).run()
            guard let previous else { return .credited }
            return previous.gearID == gearID ? .distanceChanged : .moved(from: previous.gearID)
        }
    }

    /// Takes a workout's credit away from whatever pair had it; the pair's id, if any.
    @discardableResult
    public func uncredit(workoutID: String) throws -> String? {
        try db.transaction {
            let previous = try reads.gearCredit(workoutID: workoutID)
            try db.statement("DELETE FROM gear_credit WHERE workout_id = ?").bind(.text(workoutID)).run()
            return previous?.gearID
        }
    }

    /// Records that the limit announcement for `percent` went out, so it goes out once.
    public func markGearWarned(id: String, percent: Int) throws {
        try db.statement("UPDATE gear SET warned_percent = ? WHERE id = ?").bind(.integer(Int64(percent)), .text(id)).run()
    }
}
