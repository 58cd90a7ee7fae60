/// Where the supervised connection stands; observable for status and the watchdog.
public enum MQTTConnectionState: Sendable, Equatable {
    case disconnected(reason: String)
    case connecting
    case connected
    case stopped
}

/// What the connection reports to its owner, in order, from the network thread.
public enum MQTTEvent: Sendable {
    /// `receiveMaximum`: the broker's limit on unacknowledged QoS 1 messages (v5), when it set one.
    case connected(session: UInt64, receiveMaximum: Int?)
    case disconnected(reason: String)
    /// The broker acknowledged `mid` (PUBACK for QoS 1); a v5 reason code ≥ 0x80 is a refusal.
    case published(session: UInt64, mid: Int32, reasonCode: Int32)
    case message(MQTTIncomingMessage)
}
