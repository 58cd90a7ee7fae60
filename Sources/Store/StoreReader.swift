import Foundation

/// A read-only connection to the store, for answering queries and for the command line while
/// the agent runs: WAL lets it read a consistent snapshot without ever holding up the writer.
///
/// Not thread-safe: its owner uses it from one thread (or serial queue) at a time.
public final class StoreReader {
    var db: SQLiteConnection
    /// The domain reads on this reader's connection (StoreReads.swift).
    var reads: StoreReads { StoreReads(db) }
    private let path: String
    private var opened: FileIdentity.Node?

    public init(path: String) throws {
        self.path = path
        db = try Self.open(path)
        opened = FileIdentity.Node(path: path)
    }

    /// A reader's page cache: its reads are scans of the time indexes, which the kernel's page
    /// cache serves as well, and the agent holds several readers (queries, the publisher, the
    /// resender). SQLite's default of 2 000 KiB each came to a quarter of the agent's heap while a
    /// backlog landed (issue 32, docs/figures.md "Fifth step").
    static let cacheKiB = 512

    private static func open(_ path: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        try connection.execute("PRAGMA cache_size = -\(cacheKiB)")
        return connection
    }

    /// Runs `body`'s reads on one snapshot of the store — of the file now at the path: once the
    /// agent has reopened a store file that was deleted or replaced (`Store.reopen`), the reader
    /// follows instead of reading the unlinked file on.
    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        // Inside a snapshot already (a `read` within `snapshot`): the same one, on the same file.
        if !db.isInTransaction { followPath() }
        return try db.readTransaction(body)
    }

    /// Runs `body`'s reads on one snapshot (`snapshot`): the `StoreReading` path, synchronous
    /// here, for the day's computation and everything else that reads through a reader.
    public func read<T>(_ body: (StoreReads) throws -> T) throws -> T {
        try snapshot { try body(reads) }
    }

    private func followPath() {
        guard let current = FileIdentity.Node(path: path), current != opened,
            let fresh = try? Self.open(path)
        else { return }
        db = fresh
        opened = current
    }
}

extension StoreReader: StoreReading {}
