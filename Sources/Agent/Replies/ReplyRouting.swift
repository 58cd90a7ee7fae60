import Bus

/// Where a reply goes: the MQTT v5 Response Topic (with its Correlation Data echoed), else the
/// request's `reply_to`, else `<root>/selection/result`. A requested topic outside the allow-list
/// is refused (403) and the refusal goes to the fallback topic.
///
/// The allow-list: every topic (or those matching `[query] reply_topics`), except what a
/// requester must never make the agent write to — the whole `<prefix>/…` tree (the agent's own
/// data and every other device's), `$…` broker topics, the heart-rate bridge's tree (its command
/// topics), Home Assistant's discovery tree and birth topic, the OwnTracks mirror and the request
/// topics themselves. Topics are compared as the broker compares them, byte for byte (see
/// `TopicRules`).
package struct ReplyRouting: Sendable {
    let fallbackTopic: String
    /// `<prefix>`: no device's tree under it takes replies.
    private let prefix: [UInt8]
    /// `<prefix>/<device>`, named in the refusal.
    private let ownRoot: [UInt8]
    /// Filters nobody may have replies written into, each with the reason given.
    private let refused: [(filter: [UInt8], reason: String)]
    /// `[query] reply_topics`; empty: any topic not refused.
    private let allowed: [[UInt8]]

    package struct Route: Sendable, Equatable {
        package var topic: String
        package var refusal: QueryError?
    }

    /// `fallbackTopic`: where replies go without a response topic (queries: `selection/result`).
    package init(config: AgentConfig, fallbackTopic: String? = nil) {
        self.fallbackTopic = fallbackTopic ?? "\(config.topicRoot)/selection/result"
        prefix = Array(config.mqtt.prefix.utf8)
        ownRoot = Array(config.topicRoot.utf8)
        let bridge = Self.bridgeTree(of: config.hr.topic)
        var refused: [(filter: [UInt8], reason: String)] = [(Array(bridge.utf8), "is in the heart-rate bridge's topics (\(bridge))")]
        if !config.mqtt.owntracksTopic.isEmpty {
            refused.append((Array(config.mqtt.owntracksTopic.utf8), "is a topic the agent publishes"))
        }
        // Home Assistant reads every message there as an entity's config or its own birth.
        let discovery = "\(config.homeAssistant.discoveryPrefix)/#"
        refused.append((Array(discovery.utf8), "is in Home Assistant's discovery topics (\(discovery))"))
        refused.append((Array(config.homeAssistant.birthTopic.utf8), "is Home Assistant's status topic"))
        for filter in config.query.extraTopics {
            refused.append((Array(filter.utf8), "is a topic the agent takes requests on (\(filter))"))
        }
        self.refused = refused
        allowed = config.query.replyTopics.map { Array($0.utf8) }
    }

    /// The tree the heart-rate bridge uses, from `[hr] topic`: its first level and everything
    /// below (`hrbridge/v1/+/measurement` → `hrbridge/#`), so the bridge's `cmd` and `status`
    /// topics are in it; when the first level is a wildcard, the measurement topic's siblings.
    static func bridgeTree(of measurementFilter: String) -> String {
        let slash = UInt8(ascii: "/")
        let levels = Array(measurementFilter.utf8).split(separator: slash, omittingEmptySubsequences: false).map(Array.init)
        let wildcards: [[UInt8]] = [[UInt8(ascii: "+")], [UInt8(ascii: "#")]]
        let kept = levels.first.map { wildcards.contains($0) ? Array(levels.dropLast()) : [$0] } ?? []
        return String(decoding: Array((kept + [[UInt8(ascii: "#")]]).joined(separator: [slash])), as: UTF8.self)
    }

    func route(responseTopic: String?, replyTo: String?) -> Route {
        guard let requested = responseTopic ?? replyTo else { return Route(topic: fallbackTopic, refusal: nil) }
        if let reason = problem(with: Array(requested.utf8)) {
            return Route(topic: fallbackTopic, refusal: QueryError(code: .forbiddenTopic, message: "response topic \(reason)"))
        }
        return Route(topic: requested, refusal: nil)
    }

    /// Why a reply may not go to `topic`, or nil when it may.
    func problem(with topic: [UInt8]) -> String? {
        if topic.isEmpty { return "is empty" }
        if topic.count > 65_535 { return "is longer than MQTT allows" }
        if topic.contains(0) { return "contains U+0000" }
        if !TopicRules.isValidMQTTString(topic) {
            return "is not valid MQTT UTF-8 (malformed, or with control characters or non-characters)"
        }
        if topic.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) { return "contains a wildcard" }
        if topic.first == UInt8(ascii: "$") { return "starts with $ (broker topics)" }
        if TopicRules.isWithin(topic, tree: ownRoot) {
            return "is inside the agent's own topics (\(String(decoding: ownRoot, as: UTF8.self))/…)"
        }
        if TopicRules.isWithin(topic, tree: prefix) {
            return "is inside another device's topics (\(String(decoding: prefix, as: UTF8.self))/…)"
        }
        for (filter, reason) in refused where TopicRules.matches(filter: filter, topic: topic) { return reason }
        if !allowed.isEmpty && !allowed.contains(where: { TopicRules.matches(filter: $0, topic: topic) }) {
            return "is not in [query] reply_topics"
        }
        return nil
    }

    /// Replies go out with the request's QoS. A QoS 0 request gets a QoS 0 reply: no PUBACK from
    /// the broker follows it, so on a broker with Nagle's algorithm on (mosquitto's default) the
    /// next request is not held back until our delayed ACK of that PUBACK (~40 ms). The requester
    /// asked for at-most-once and its subscription caps the delivery at its own QoS anyway.
    static func replyQoS(forRequestQoS qos: Int) -> MQTTQoS { qos == 0 ? .atMostOnce : .atLeastOnce }
}
