/// Where a reply goes: the MQTT v5 Response Topic (with its Correlation Data echoed), else the
/// request's `reply_to`, else `<root>/selection/result`. A requested topic that is unsafe to
/// publish to — wildcards, `$`-topics, the agent's own data topics — is refused (403) and the
/// refusal goes to the fallback topic.
struct ReplyRouting: Sendable {
    let fallbackTopic: String
    /// `<prefix>/<device>`: nobody may have replies written over the agent's data.
    let ownRoot: String
    /// Further topics the agent publishes (the OwnTracks mirror).
    let protectedTopics: [String]

    struct Route: Sendable, Equatable {
        var topic: String
        var refusal: QueryError?
    }

    func route(responseTopic: String?, replyTo: String?) -> Route {
        guard let requested = responseTopic ?? replyTo else { return Route(topic: fallbackTopic, refusal: nil) }
        if let reason = problem(with: requested) {
            return Route(topic: fallbackTopic, refusal: QueryError(code: .forbiddenTopic, message: "response topic \(reason)"))
        }
        return Route(topic: requested, refusal: nil)
    }

    private func problem(with topic: String) -> String? {
        if topic.isEmpty { return "is empty" }
        if topic.utf8.count > 65_535 { return "is longer than MQTT allows" }
        if topic.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) { return "contains a wildcard" }
        if topic.utf8.first == UInt8(ascii: "$") { return "starts with $ (broker topics)" }
        if topic.utf8.contains(0) { return "contains NUL" }
        if topic == ownRoot || topic.hasPrefix(ownRoot + "/") { return "is inside the agent's own topics (\(ownRoot)/…)" }
        if protectedTopics.contains(topic) { return "is a topic the agent publishes" }
        return nil
    }
}
