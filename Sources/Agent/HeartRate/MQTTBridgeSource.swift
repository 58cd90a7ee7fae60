import Bus
import Foundation

/// Bridge messages on the agent's own MQTT connection (`[hr] transport = "mqtt"`): the bridge
/// publishes to `hrbridge/v1/<sensor>/measurement`, keeps `…/status` retained `online`/`offline`,
/// and takes `{"op":"reconnect"}` on `…/cmd`.
final class MQTTBridgeSource: HeartRateTransport, @unchecked Sendable {
    let name = "mqtt"
    let events: AsyncStream<HeartRateTransportEvent>
    private let sink: AsyncStream<HeartRateTransportEvent>.Continuation
    /// The measurement filter, e.g. `hrbridge/v1/+/measurement`.
    let measurementFilter: String
    /// The same with `status` as the last level.
    let statusFilter: String
    private let client: MQTTClient
    private let lock = NSLock()
    private var measurementTopics: Set<String> = []
    private var ticker: Task<Void, Never>?

    init(filter: String, client: MQTTClient) {
        measurementFilter = filter
        statusFilter = Self.sibling(of: filter, lastLevel: "status")
        self.client = client
        (events, sink) = AsyncStream.makeStream(of: HeartRateTransportEvent.self, bufferingPolicy: .bufferingNewest(10_000))
    }

    /// `a/b/measurement` → `a/b/<lastLevel>`.
    static func sibling(of topic: String, lastLevel: String) -> String {
        var levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if levels.count > 1 { levels.removeLast() }
        return (levels + [lastLevel]).joined(separator: "/")
    }

    func start() {
        let sink = self.sink
        ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                sink.yield(.idle)
            }
        }
    }

    func stop() {
        ticker?.cancel()
        sink.finish()
    }

    /// Called by the bus for every message on the measurement or status filter.
    func deliver(_ message: MQTTIncomingMessage) {
        if TopicRules.matches(filter: statusFilter, topic: message.topic) {
            let state = String(decoding: message.payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if state == "online" { sink.yield(.ready) } else if state == "offline" { sink.yield(.failed("bridge says offline")) }
            return
        }
        _ = lock.withLock { measurementTopics.insert(message.topic) }
        sink.yield(.line(message.payload))
    }

    /// Commands every bridge heard from to reconnect its strap, and subscribes again.
    func reacquire() {
        let topics = lock.withLock { measurementTopics }
        for topic in topics {
            _ = try? client.publish(MQTTMessage(
                topic: Self.sibling(of: topic, lastLevel: "cmd"), payload: Array(#"{"op":"reconnect"}"#.utf8), qos: .atLeastOnce,
                properties: .json))
        }
        client.resubscribe(measurementFilter)
    }
}
