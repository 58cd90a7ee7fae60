extension Store {
    /// SQLite's `synchronous` for the store file (`[store] synchronous`), and whether an ingest
    /// journal slot is synced by itself: `full` syncs every commit; `normal`, like SQLite's WAL
    /// then, leaves it to the next checkpoint (a power cut may lose the last commits, never the file).
    public enum Synchronous: String, Sendable, Equatable, CaseIterable {
        case full, normal

        /// The PRAGMA's value.
        var pragma: String {
            switch self {
            case .full: "FULL"
            case .normal: "NORMAL"
            }
        }
    }
}
