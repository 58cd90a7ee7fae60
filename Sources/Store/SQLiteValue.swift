public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public static func int(_ value: Int?) -> SQLiteValue? { value.map { .integer(Int64($0)) } }
    public static func double(_ value: Double?) -> SQLiteValue? { value.map { .real($0) } }
}
