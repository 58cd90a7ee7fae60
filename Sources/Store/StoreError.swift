/// Why the store could not open its file: a schema from a newer keepalive, or SQLite's error with the path.
public enum StoreError: Error, CustomStringConvertible {
    case newerSchema(found: Int, supported: Int, path: String)
    case sqlite(SQLiteError, path: String)

    public var description: String {
        switch self {
        case .newerSchema(let found, let supported, let path):
            "\(path) has schema version \(found), newer than this keepalive understands (\(supported)); install a newer keepalive or move the file away"
        case .sqlite(let error, let path):
            "\(path): \(error)"
        }
    }
}
