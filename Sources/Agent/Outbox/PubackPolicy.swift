/// What a v5 PUBACK reason code means for the outbox (MQTT 5.0, 3.4.2.1). Below 0x80 the broker
/// has the message: 0x00, and 0x10 "no matching subscribers". From 0x80 it refused it, either
/// for now — overloaded, a passing fault — so it is sent again after a backoff, or for good —
/// not allowed, malformed — so it is set aside in the outbox for a person to look at rather
/// than retried forever. A code this list does not know is taken as permanent: retrying what
/// may never pass would hold up every message behind it.
enum PubackPolicy: Equatable {
    case delivered
    case retry
    case setAside

    static let transientCodes: Set<Int32> = [
        0x80,  // unspecified error
        0x83,  // implementation specific error (a plugin's passing refusal)
        0x89,  // server busy
        0x91,  // packet identifier in use: a stale mid, fine on the next try
        0x97,  // quota exceeded
    ]

    init(reasonCode: Int32) {
        if reasonCode < 0x80 {
            self = .delivered
        } else if Self.transientCodes.contains(reasonCode) {
            self = .retry
        } else {
            // 0x87 not authorized, 0x90 topic name invalid, 0x95 packet too large,
            // 0x99 payload format invalid, and anything unknown.
            self = .setAside
        }
    }

    /// How often one message is retried before it is set aside after all: a refusal that never
    /// passes must not hold up the queue forever.
    static let maximumAttempts = 10
}
