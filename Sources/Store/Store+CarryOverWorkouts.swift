/// Workouts, shoes and credits are small and never come back from raw rows: a store file
/// replaced under the running agent keeps them (Store+File.swift).
extension Store {
    static let carriedWorkoutTables: [(table: String, columns: [String])] = [
        ("workout", ["id", "version", "start_ms", "end_ms", "sport", "source", "finished", "distance_m", "record", "updated_ms"]),
        ("gear", ["id", "name", "start_km", "limit_km", "retired", "selected", "created_ms", "warned_percent"]),
        ("gear_credit", ["workout_id", "gear_id", "km", "workout_end_ms", "credited_ms"]),
    ]

    /// Rows the new file already has (a replacement that is a copy of the old one) are kept.
    static func copyWorkoutsAndGear(from old: SQLiteConnection, to fresh: SQLiteConnection) throws {
        for (table, columns) in carriedWorkoutTables {
            let list = columns.joined(separator: ", ")
            let select = try old.statement(sql: "SELECT \(list) FROM \(table)")
            defer { select.reset() }
            let insert = "INSERT OR IGNORE INTO \(table) (\(list)) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            while try select.step() {
                try fresh.statement(sql: insert).bind(columns.indices.map { select.value(Int32($0)) }).run()
            }
        }
    }
}
