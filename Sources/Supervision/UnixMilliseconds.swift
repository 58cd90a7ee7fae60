import Foundation

extension Date {
    /// Milliseconds since 1970-01-01T00:00Z, rounded down: how the store and the wire keep time.
    public var unixMs: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    public init(unixMs: Int64) { self.init(timeIntervalSince1970: Double(unixMs) / 1000) }
}
