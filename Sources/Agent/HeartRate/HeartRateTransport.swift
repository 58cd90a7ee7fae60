/// Where bridge messages come from (`[hr] transport`): each transport delivers lines and knows
/// how to reacquire its bridge.
protocol HeartRateTransport: Sendable {
    var name: String { get }
    var events: AsyncStream<HeartRateTransportEvent> { get }
    func start()
    func stop()
    /// The bridge went quiet: reconnect it (command it, reopen, restart, rebind).
    func reacquire()
}

enum HeartRateTransportEvent: Sendable {
    /// One bridge message (an NDJSON line, a datagram's line, an MQTT payload).
    case line([UInt8])
    /// The input is open (socket bound, bridge online).
    case ready
    /// The input or the bridge is gone.
    case failed(String)
    /// Nothing arrived for a moment: lets the consumer check for a stall.
    case idle
}
