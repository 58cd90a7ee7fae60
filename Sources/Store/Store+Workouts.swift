/// Workouts (schema 6): saved by id, a changed record raising the version; never duplicated.
extension Store {
    /// Saves a workout under its id: a new row, the same row with the version raised when
    /// anything in it changed, or nothing when it is the same as stored (a replay). Versions:
    /// 0 while it goes on, 1 when it first finished, one more for each change after.
    @discardableResult
    public func saveWorkout(_ workout: StoredWorkout) throws -> WorkoutSaveOutcome {
        try db.transaction { try saveWorkoutRow(workout) }
    }

    /// `saveWorkout` inside a transaction already open (`write(…, workouts:)`: with the messages
    /// that announce it).
    @discardableResult
    func saveWorkoutRow(_ workout: StoredWorkout) throws -> WorkoutSaveOutcome {
        guard let stored = try reads.workout(id: workout.id) else {
            let version = StoredWorkout.version(saving: workout.finished, over: nil)
            try db.statement(
                """
                INSERT INTO workout (id, version, start_ms, end_ms, sport, source, finished, distance_m, record, updated_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            ).bind(
                .text(workout.id), .integer(Int64(version)), .integer(workout.startMs), workout.endMs.map { .integer($0) }, .text(workout.sport),
                .text(workout.source), .integer(workout.finished ? 1 : 0), .real(workout.distanceM), .text(workout.record),
                .integer(workout.updatedMs)
            ).run()
            return .inserted(version: version)
        }
        guard stored.record != workout.record || stored.finished != workout.finished || stored.endMs != workout.endMs
            || stored.sport != workout.sport
        else { return .unchanged(version: stored.version) }
        let version = StoredWorkout.version(saving: workout.finished, over: stored)
        try db.statement(
            """
            UPDATE workout SET version = ?, start_ms = ?, end_ms = ?, sport = ?, source = ?, finished = ?, distance_m = ?,
                               record = ?, updated_ms = ?
            WHERE id = ?
            """
        ).bind(
            .integer(Int64(version)), .integer(workout.startMs), workout.endMs.map { .integer($0) }, .text(workout.sport),
            .text(workout.source), .integer(workout.finished ? 1 : 0), .real(workout.distanceM), .text(workout.record),
            .integer(workout.updatedMs), .text(workout.id)
        ).run()
        return .updated(version: version)
    }

    /// Removes a workout that turned out not to be one (too short once it ended), with any credit.
    public func deleteWorkout(id: String) throws {
        try db.transaction {
            try db.statement("DELETE FROM gear_credit WHERE workout_id = ?").bind(.text(id)).run()
            try db.statement("DELETE FROM workout WHERE id = ?").bind(.text(id)).run()
        }
    }
}
