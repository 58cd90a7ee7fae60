/// A day's aggregate row.
public struct StoredDayAggregate: Sendable, Equatable {
    public var date: String
    public var tz: String
    public var payload: String
    public var final: Bool
    public var updatedMs: Int64
    public var publishedPayload: String?
    /// The day's first and last fix as the JSON a query reply shows (`null` without fixes);
    /// nil where not recorded (aggregates stored before schema 3).
    public var firstFix: String?
    public var lastFix: String?
    /// Rows of the day were stored after the aggregate was computed (a bridge backlog, a
    /// replay): it no longer tells the whole day. Read from the store; ignored when saving.
    public var isStale: Bool

    public init(
        date: String, tz: String, payload: String, final: Bool, updatedMs: Int64, publishedPayload: String? = nil,
        firstFix: String? = nil, lastFix: String? = nil, isStale: Bool = false
    ) {
        self.date = date
        self.tz = tz
        self.payload = payload
        self.final = final
        self.updatedMs = updatedMs
        self.publishedPayload = publishedPayload
        self.firstFix = firstFix
        self.lastFix = lastFix
        self.isStale = isStale
    }
}
