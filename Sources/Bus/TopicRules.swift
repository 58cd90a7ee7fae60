/// What MQTT (v5 §4.7) allows in topic names and filters, checked before anything reaches
/// the broker: a broker disconnects a client that publishes to a malformed topic.
public enum TopicRules {
    /// A problem with one topic level (a device id), or nil when it is fine.
    public static func problemWithLevel(_ level: String) -> String? {
        if level.isEmpty { return "must not be empty" }
        if level.utf8.count > 128 { return "must be at most 128 bytes" }
        if level.contains(where: { "/+#".contains($0) || $0 == "\0" }) {
            return "must be one MQTT topic level: no '/', '+', '#' or NUL, got \"\(level)\""
        }
        return nil
    }

    /// A problem with a topic name used as a prefix for publishing (`keepalive`, `owntracks/me/pi`).
    public static func problemWithPrefix(_ topic: String) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.hasPrefix("$") { return "must not start with '$' (reserved for the broker)" }
        if topic.hasPrefix("/") || topic.hasSuffix("/") { return "must not start or end with '/', got \"\(topic)\"" }
        if topic.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) {
            return "must not contain wildcards ('+', '#') or NUL, got \"\(topic)\""
        }
        return nil
    }

    /// A problem with a topic name a message is published to (a reply topic), or nil.
    public static func problemWithName(_ topic: String) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.utf8.count > 65535 { return "is too long" }
        if topic.contains(where: { $0 == "+" || $0 == "#" }) { return "must not contain wildcards" }
        if topic.contains("\0") { return "must not contain NUL" }
        return nil
    }

    /// A problem with a subscription filter, or nil: '#' only last and alone in its level,
    /// '+' alone in its level.
    public static func problemWithFilter(_ filter: String) -> String? {
        if filter.isEmpty { return "must not be empty" }
        if filter.contains("\0") { return "must not contain NUL" }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                return "'#' must be a whole level and the last one, got \"\(filter)\""
            }
            if level.contains("+") && level != "+" {
                return "'+' must be a whole level, got \"\(filter)\""
            }
        }
        return nil
    }

    /// Whether `topic` matches the subscription `filter`.
    public static func matches(filter: String, topic: String) -> Bool {
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        if topic.hasPrefix("$") && (filterLevels.first == "+" || filterLevels.first == "#") { return false }
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else { return false }
            if level != "+" && level != topicLevels[index] { return false }
        }
        return filterLevels.count == topicLevels.count
    }
}
