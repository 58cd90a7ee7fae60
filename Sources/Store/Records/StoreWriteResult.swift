/// What one write stored: replays of the same data store nothing new.
public struct StoreWriteResult: Sendable, Equatable {
    /// Rows inserted, by kind name.
    private var inserted: [String: Int] = [:]
    public var seqs: [Int64] = []

    public init() {}

    public func inserted<Kind: SampleKind>(_ kind: Kind.Type) -> Int { inserted[Kind.name] ?? 0 }

    mutating func add(_ count: Int, of name: String) { inserted[name, default: 0] += count }

    /// Rows inserted, every kind.
    public var rowsInserted: Int { inserted.values.reduce(0, +) }
}
