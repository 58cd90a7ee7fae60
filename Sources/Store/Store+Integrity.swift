import Foundation

/// A damaged file is found at start (`openChecked`), or in the background for a file too large
/// to check then (`fullCheck`, `markDamaged`), and moved aside, never repaired in place.
extension Store {
    /// The writer's page cache. Its writes append at the right edge of the tables and the time
    /// indexes, a few pages deep; SQLite's default of 2 000 KiB was the largest single item of
    /// the agent's heap after a backlog (heaptrack: 2.4 of 12.2 MiB at 100 000 notifications).
    static let writerCacheKiB = 512

    /// Opens, sets the pragmas, and checks the file: all of it up to `fullCheckMaxBytes`, else
    /// the small tables the agent cannot run without. A damaged file throws a `corrupt` SQLiteError.
    /// Returns the connection and whether the whole file was checked.
    static func openChecked(path: String, synchronous: Synchronous, fullCheckMaxBytes: Int64) throws -> (SQLiteConnection, Bool) {
        let connection = try SQLiteConnection(path: path)
        // Both only take effect on a new, empty file, and must come before WAL mode fixes its
        // header: small pages for SD-card wear (see `pageSize`); pruning gives space back.
        try connection.execute("PRAGMA page_size = \(pageSize)")
        try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = \(synchronous.pragma)")
        try connection.execute("PRAGMA foreign_keys = ON")
        try connection.execute("PRAGMA cache_size = -\(writerCacheKiB)")
        // Keep the WAL from growing without bound between checkpoints on a busy day.
        try connection.execute("PRAGMA journal_size_limit = 8388608")
        let filePageSize = Int(try connection.scalarInt("PRAGMA page_size") ?? 4096)
        try connection.execute("PRAGMA wal_autocheckpoint = \(checkpointPages(pageSize: filePageSize))")
        let size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil) ?? 0
        let whole = size <= fullCheckMaxBytes
        let check: String
        if whole {
            check = try connection.scalarText("PRAGMA quick_check") ?? "no answer"
        } else {
            let smallTables: [(name: String, check: StaticString)] = [
                ("agent_state", "PRAGMA quick_check(agent_state)"), ("outbox", "PRAGMA quick_check(outbox)"),
                ("day_aggregate", "PRAGMA quick_check(day_aggregate)"),
            ]
            var finding = "ok"
            for table in smallTables where finding == "ok" {
                if try connection.hasTable(table.name) { finding = try connection.scalarText(table.check) ?? "no answer" }
            }
            check = finding
        }
        guard check == "ok" else {
            throw SQLiteError(.corrupt, message: "quick_check: \(check)")
        }
        return (connection, whole)
    }

    /// Runs `PRAGMA quick_check` over the whole file on a connection of its own (read-only: it
    /// never holds up the writer); nil when intact, else what it found. Takes minutes on a large
    /// file on an SD card: run it off Swift's task threads. `onOpen` receives the connection,
    /// whose `interrupt()` stops the check from another thread.
    public static func fullCheck(path: String, onOpen: (SQLiteConnection) -> Void = { _ in }) throws -> String? {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        onOpen(connection)
        let check = try connection.scalarText("PRAGMA quick_check") ?? "no answer"
        return check == "ok" ? nil : check
    }

    /// Records that a full check found the file damaged: the next start moves it aside and
    /// begins a new one (the agent cannot swap the file it is writing to while it runs).
    public static func markDamaged(path: String, finding: String) throws {
        try Data(finding.utf8).write(to: URL(fileURLWithPath: damageMarker(path)), options: .atomic)
    }

    static func damageMarker(_ path: String) -> String { path + ".damaged" }

    static func damageFinding(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: damageMarker(path)) else { return nil }
        return String(decoding: data.prefix(2000), as: UTF8.self)
    }

    /// Renames a damaged file (and its -wal/-shm) to `<path>.corrupt-<UTC time>`, keeping it for inspection.
    static func moveAside(_ path: String, now: Date) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let aside = "\(path).corrupt-\(formatter.string(from: now))"
        let manager = FileManager.default
        try manager.moveItem(atPath: path, toPath: aside)
        for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
            try? manager.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        return aside
    }

    /// `PRAGMA integrity_check` (slow: the whole file). "ok" when healthy.
    public func integrityCheck() throws -> String {
        try db.scalarText("PRAGMA integrity_check") ?? "no answer"
    }
}
