/// A queued message, in delivery order (`id`; 0 for a message held in memory, not yet queued).
public struct OutboxEntry: Sendable, Equatable {
    public var id: Int64
    public var seq: Int64
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    public var contentType: String?
    public var expiryS: Int?
    public var createdMs: Int64
}
