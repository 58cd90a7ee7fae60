import SensorBridge
/// Where bridge messages come from (`[hr] transport`): each transport reads lines, parses them
/// on its own thread (a backlog parses in parallel with the store's commits), and knows how to
/// reacquire its bridge.
protocol BridgeTransport: Sendable {
    var name: String { get }
    /// Bounded: a transport whose consumer is behind waits (or, for UDP, counts what it drops).
    var events: HeartRateTransportEvents { get }
    func start()
    func stop()
    /// The bridge went quiet: reconnect it (command it, reopen, restart, rebind).
    func reacquire()
}

typealias HeartRateTransportEvents = BoundedHandoff<HeartRateTransportEvent>.Events

enum HeartRateTransportEvent: Sendable {
    /// Its weight in a transport's queue: its line count.
    var weight: Int {
        if case .messages(let messages) = self { return max(1, messages.count) }
        return 1
    }

    /// Bridge messages, parsed (or why not), from NDJSON lines as one read or datagram brought
    /// them or from an MQTT payload: handed over together, as a backlog arrives thousands a second.
    case messages([BridgeMessage.Parsed])
    /// The input is open (socket bound, bridge online).
    case ready
    /// The input or the bridge is gone.
    case failed(String)
    /// Nothing arrived for a moment: lets the consumer check for a stall.
    case idle
}
