/// A message to queue. Its payload is made inside the transaction, once its `seq` is known.
public struct OutboxDraft: Sendable {
    public var topic: String
    public var qos: Int
    public var retain: Bool
    public var contentType: String?
    public var expiryS: Int?
    /// A newer draft on the same topic may replace this one while it is still undelivered
    /// (`health/today`, `status`); never for `location` or `health/daily`.
    public var supersedable: Bool
    /// When the store cannot take it (disk full), keep it in memory with its seq, send it live,
    /// and queue it once the store works again (`Store.hold`): for messages that are never
    /// dropped (`location`, `event/…`). Others fail with the write.
    public var holdWhenUnstorable: Bool
    public var makePayload: @Sendable (_ seq: Int64) -> [UInt8]

    public init(
        topic: String, qos: Int = 1, retain: Bool, contentType: String? = "application/json", expiryS: Int? = nil,
        supersedable: Bool = false, holdWhenUnstorable: Bool = false, makePayload: @escaping @Sendable (_ seq: Int64) -> [UInt8]
    ) {
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.contentType = contentType
        self.expiryS = expiryS
        self.supersedable = supersedable
        self.holdWhenUnstorable = holdWhenUnstorable
        self.makePayload = makePayload
    }
}
