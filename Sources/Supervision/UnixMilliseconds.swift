import Foundation

/// Unix milliseconds, as the store, the payloads and the wire keep time: one conversion for the
/// whole project, so that a stamp written in one place is read back as the same instant elsewhere.
extension Date {
    /// The instant in Unix milliseconds, to the nearest: a GPS time of `…123` ms arrives as a
    /// Double a hair under it, and rounding down would store `…122`.
    public var unixMs: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// The instant `unixMs` milliseconds after 1970-01-01T00:00:00Z.
    public init(unixMs: Int64) { self.init(timeIntervalSince1970: Double(unixMs) / 1000) }
}
