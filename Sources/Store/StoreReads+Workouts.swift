/// Reads of workouts and gear.
extension StoreReads {
    static let workoutSelection = "id, version, start_ms, end_ms, sport, source, finished, distance_m, record, updated_ms"

    public func workout(id: String) throws -> StoredWorkout? {
        let statement = try db.statement(sql: "SELECT \(Self.workoutSelection) FROM workout WHERE id = ?").bind(.text(id))
        defer { statement.reset() }
        return try statement.step() ? Self.workout(statement) : nil
    }

    /// Workouts starting in `[fromMs, toMs)`, oldest first.
    public func workouts(fromMs: Int64, toMs: Int64, finishedOnly: Bool = true) throws -> [StoredWorkout] {
        let statement = try db.statement(
            sql: "SELECT \(Self.workoutSelection) FROM workout WHERE start_ms >= ? AND start_ms < ? AND finished >= ? ORDER BY start_ms"
        ).bind(.integer(fromMs), .integer(toMs), .integer(finishedOnly ? 1 : 0))
        defer { statement.reset() }
        var found: [StoredWorkout] = []
        while try statement.step() { found.append(Self.workout(statement)) }
        return found
    }

    public func openWorkouts() throws -> [StoredWorkout] {
        let statement = try db.statement(sql: "SELECT \(Self.workoutSelection) FROM workout WHERE finished = 0 ORDER BY start_ms")
        defer { statement.reset() }
        var found: [StoredWorkout] = []
        while try statement.step() { found.append(Self.workout(statement)) }
        return found
    }

    /// The finished workout that ended last.
    public func latestFinishedWorkout() throws -> StoredWorkout? {
        let statement = try db.statement(
            sql: "SELECT \(Self.workoutSelection) FROM workout WHERE finished = 1 ORDER BY end_ms DESC LIMIT 1")
        defer { statement.reset() }
        return try statement.step() ? Self.workout(statement) : nil
    }

    private static func workout(_ row: SQLiteStatement) -> StoredWorkout {
        StoredWorkout(
            id: row.text(0), version: row.int(1), startMs: row.int64(2), endMs: row.isNull(3) ? nil : row.int64(3), sport: row.text(4),
            source: row.text(5), finished: row.int(6) != 0, distanceM: row.double(7), record: row.text(8), updatedMs: row.int64(9))
    }

    public func allGear() throws -> [StoredGear] {
        let statement = try db.statement(sql: "\(Self.gearSelection) GROUP BY g.id ORDER BY g.created_ms, g.id")
        defer { statement.reset() }
        var found: [StoredGear] = []
        while try statement.step() { found.append(Self.gear(statement)) }
        return found
    }

    public func gear(id: String) throws -> StoredGear? {
        let statement = try db.statement(sql: "\(Self.gearSelection) WHERE g.id = ? GROUP BY g.id").bind(.text(id))
        defer { statement.reset() }
        return try statement.step() ? Self.gear(statement) : nil
    }

    /// The pair new runs are credited to.
    public func selectedGear() throws -> StoredGear? { try allGear().first { $0.selected && !$0.retired } }

    /// The pair a workout is credited to.
    public func gearCredit(workoutID: String) throws -> (gearID: String, km: Double)? {
        let statement = try db.statement(sql: "SELECT gear_id, km FROM gear_credit WHERE workout_id = ?").bind(.text(workoutID))
        defer { statement.reset() }
        return try statement.step() ? (statement.text(0), statement.double(1)) : nil
    }

    private static let gearSelection = """
        SELECT g.id, g.name, g.start_km, g.limit_km, g.retired, g.selected, g.created_ms, g.warned_percent,
               COALESCE(SUM(c.km), 0), COUNT(c.workout_id), MAX(c.workout_end_ms)
        FROM gear g LEFT JOIN gear_credit c ON c.gear_id = g.id
        """

    private static func gear(_ row: SQLiteStatement) -> StoredGear {
        StoredGear(
            id: row.text(0), name: row.text(1), startKm: row.double(2), limitKm: row.optionalDouble(3), retired: row.int(4) != 0,
            selected: row.int(5) != 0, createdMs: row.int64(6), warnedPercent: row.int(7), creditedKm: row.double(8), runs: row.int(9),
            lastUsedMs: row.isNull(10) ? nil : row.int64(10))
    }
}
