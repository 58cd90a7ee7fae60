/// One way to read the store, whoever holds the connection — GRDB's `DatabaseReader`, which its
/// writers satisfy too. `StoreReader` runs `body` on one snapshot of its read-only connection;
/// `Store` runs it on the writer connection inside the actor, after folding the ingest journal
/// (`Store.readStored` leaves the journal alone). The queries are `StoreReads`' either way, so a
/// day read through the agent's writer and one read through a reader take the same path.
public protocol StoreReading {
    func read<T: Sendable>(_ body: @Sendable (StoreReads) throws -> T) async throws -> T
}
