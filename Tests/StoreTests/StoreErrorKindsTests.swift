import Foundation
import Testing
import TestKit

@testable import Store

/// Errors leave the store typed: SQLite's as a `SQLiteError` whose `kind` callers switch on,
/// the ingest journal file's as a `JournalFileError` with the call, the path and `errno`.
/// Real SQLite files and a real ring file in a temporary directory.
@Suite("Store error kinds")
struct StoreErrorKindsTests {
    @Test("a UNIQUE violation is a SQLiteError of kind constraint, in SQLite's words")
    func constraintKind() throws {
        let directory = try TemporaryDirectory()
        let db = try SQLiteConnection(path: directory.file("k.db"))
        try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let error = try #require(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(error.kind == .constraint, "\(error)")
        #expect(error.codeText == "constraint failed")
        #expect(error.message.contains("UNIQUE"), "\(error.message)")
    }

    @Test("a file that is not a database is a SQLiteError of kind notADatabase, counted as corruption")
    func notADatabaseKind() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("k.db", String(repeating: "not a database ", count: 100))
        let error = try #require(throws: SQLiteError.self) {
            _ = try SQLiteConnection(path: path, readOnly: true).scalarInt("PRAGMA user_version")
        }
        #expect(error.kind == .notADatabase, "\(error)")
        #expect(error.isCorruption)
    }

    @Test("a ring file that cannot be opened is a JournalFileError naming the call, the path and errno")
    func journalFileErrorFields() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("missing/k.db-ingest")
        let error = try #require(throws: JournalFileError.self) {
            _ = try JournalFile(path: path, slots: IngestRing.slots, syncsEachWrite: false)
        }
        #expect(error.operation == "open")
        #expect(error.path == path)
        #expect(error.errno == ENOENT)
        #expect("\(error)" == "ingest journal \(path): open: No such file or directory")
    }
}
