/// The newest row id seen of each sample kind: where reading new rows continues. A kind not
/// seen yet is at 0.
public struct RowCursor: Sendable, Equatable, CustomStringConvertible {
    private var ids: [String: Int64] = [:]

    public init() {}

    public subscript<Kind: SampleKind>(_ kind: Kind.Type) -> Int64 {
        get { ids[Kind.name] ?? 0 }
        set { ids[Kind.name] = newValue }
    }

    subscript(name name: String) -> Int64 {
        get { ids[name] ?? 0 }
        set { ids[name] = newValue }
    }

    public var description: String {
        SampleKinds.all.map { "\($0.name) \(self[name: $0.name])" }.joined(separator: ", ")
    }
}
