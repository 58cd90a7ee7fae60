import CSQLite

extension StoreReader {
    /// Whether `text` is JSON as SQLite's own `json_valid()` reads it (RFC 8259, no JSON5): the
    /// check that a stored aggregate's JSON did not rot on the card before it is spliced into a
    /// reply. SQLite's parser is already linked and tested; one prepared statement, no copy.
    public func isValidJSON(_ text: String) throws -> Bool {
        let statement = try db.statement("SELECT json_valid(?)").bind(.text(text))
        defer { statement.reset() }
        return try statement.step() && statement.int64(0) == 1
    }
}
