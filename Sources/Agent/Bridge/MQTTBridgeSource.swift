import Bus
import Foundation
import Synchronization

/// Bridge messages on the agent's own MQTT connection (`[hr] transport = "mqtt"`): the bridge
/// publishes to `hrbridge/v1/<sensor>/measurement`, keeps `…/status` retained `online`/`offline`,
/// and takes `{"op":"reconnect"}` on `…/cmd`.
///
/// Backpressure: messages are handed over on the MQTT network thread itself (`deliver`). While
/// the heart-rate service is behind, that thread waits (at most `maximumWaitS` per message), so
/// it reads nothing more from the socket: TCP fills, the broker stops getting PUBACKs, keeps at
/// most the agent's Receive Maximum in flight and queues the rest (mosquitto: up to
/// `max_queued_messages`). libmosquitto acknowledges a message before handing it over, so one
/// that still finds no room after the wait is kept anyway, up to `hardLimit`, and beyond that
/// dropped and counted (`memory_limit`).
final class MQTTBridgeSource: BridgeTransport, Sendable {
    let name = "mqtt"
    /// The measurement filter, e.g. `hrbridge/v1/+/measurement`.
    let measurementFilter: String
    /// The same with `status` as the last level.
    let statusFilter: String
    private let client: MQTTClient
    private let thread: TransportThread
    private let dropped: ReasonCounter
    /// The measurement topics heard from: the bridges `reacquire` commands.
    private let measurementTopics = Mutex<Set<String>>([])
    var events: HeartRateTransportEvents { thread.events }

    /// How long the network thread waits for room per message: short, because while it waits
    /// the connection carries nothing else (the outbox's PUBACKs, query requests, keepalive).
    static let maximumWaitS = 0.5
    let hardLimit: Int

    init(filter: String, client: MQTTClient, maxLineBytes: Int, dropped: ReasonCounter, capacity: Int = TransportThread.defaultCapacity) {
        measurementFilter = filter
        statusFilter = Self.sibling(of: filter, lastLevel: "status")
        self.client = client
        self.dropped = dropped
        thread = TransportThread(maxLineBytes: maxLineBytes, capacity: capacity)
        hardLimit = capacity * 4
    }

    /// `a/b/measurement` → `a/b/<lastLevel>`.
    static func sibling(of topic: String, lastLevel: String) -> String {
        var levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if levels.count > 1 { levels.removeLast() }
        return (levels + [lastLevel]).joined(separator: "/")
    }

    /// Its thread only reports `.idle` (messages arrive on the network thread).
    func start() {
        thread.start(name: "hr-mqtt") { [self] in
            while !thread.shouldStop {
                usleep(250_000)
                thread.idle()
            }
        }
    }

    func stop() {
        thread.requestStop()
        thread.waitUntilFinished(seconds: 2)
    }

    /// Called on the network thread for every message on the measurement or status filter.
    func deliver(_ message: MQTTIncomingMessage) {
        let delivered: Bool
        if TopicRules.matches(filter: statusFilter, topic: message.topic) {
            let state = String(decoding: message.payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard state == "online" || state == "offline" else { return }
            let event: HeartRateTransportEvent = state == "online" ? .ready : .failed("bridge says offline")
            delivered = thread.deliver(event, waitingAtMost: Self.maximumWaitS, hardLimit: hardLimit)
        } else {
            _ = measurementTopics.withLock { $0.insert(message.topic) }
            delivered = thread.deliver(lines: [message.payload], waitingAtMost: Self.maximumWaitS, hardLimit: hardLimit)
        }
        if !delivered {
            dropped.count(
                IngestCounters.HeartRateDrop.memoryLimit,
                detail: "\(thread.queued) messages already wait for the store; the broker sent this one before it saw the agent slow down")
        }
    }

    /// Commands every bridge heard from to reconnect its strap, and subscribes again.
    func reacquire() {
        let topics = measurementTopics.withLock { $0 }
        for topic in topics {
            _ = try? client.publish(MQTTMessage(
                topic: Self.sibling(of: topic, lastLevel: "cmd"), payload: Array(#"{"op":"reconnect"}"#.utf8), qos: .atLeastOnce,
                properties: .json))
        }
        client.resubscribe(measurementFilter)
    }
}
