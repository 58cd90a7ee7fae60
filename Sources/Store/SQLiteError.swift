import CSQLite

/// An error from SQLite, made once where a C call returned it (SQLiteConnection,
/// SQLiteStatement): what kind of failure it is, for callers to `switch` on, with SQLite's
/// words for the result code and its message for people. No raw result code leaves the wrapper.
public struct SQLiteError: Error, CustomStringConvertible, Equatable {
    /// SQLite's primary result codes (`SQLITE_BUSY`, `SQLITE_FULL`, …), the extended bits dropped.
    public enum Kind: Int32, Sendable, Equatable {
        case error = 1, `internal`, permission, abort, busy, locked, noMemory, readOnly, interrupted, ioError, corrupt, notFound,
            full, cannotOpen, lockProtocol, empty, schemaChanged, tooBig, constraint, typeMismatch, misuse, noLargeFileSupport,
            authorisation, format, range, notADatabase
    }

    public let kind: Kind
    /// SQLite's own words for the (extended) result code (`sqlite3_errstr`): "database or disk
    /// is full".
    public let codeText: String
    public let message: String
    /// The extended result code, for the log line only (`description`).
    private let code: Int32

    /// From a C call's result code, in the wrapper.
    init(resultCode: Int32, message: String) {
        kind = Kind(rawValue: resultCode & 0xFF) ?? .error
        codeText = String(cString: sqlite3_errstr(resultCode))
        self.message = message
        code = resultCode
    }

    /// A failure the store finds itself (a damaged file found by a check, a missing column).
    init(_ kind: Kind, message: String) {
        self.init(resultCode: kind.rawValue, message: message)
    }

    /// The file is not a database or is damaged.
    public var isCorruption: Bool {
        switch kind {
        case .corrupt, .notADatabase: true
        default: false
        }
    }

    public var description: String { "SQLite error \(code): \(message)" }
}
