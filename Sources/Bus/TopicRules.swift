import CMosquitto

/// What MQTT (v5 §4.7) allows in topic names and filters, checked before anything reaches
/// the broker: a broker disconnects a client that publishes to a malformed topic.
///
/// Topics are UTF-8 byte strings to a broker, so every check and comparison here is on
/// `topic.utf8`, never on `String`'s characters: Swift compares grapheme clusters under canonical
/// equivalence, so `"a/"` is no prefix of `"a/\u{301}b"` and `"é"` equals `"e\u{301}"`, where a
/// broker sees a prefix in the first case and two different topics in the second.
public enum TopicRules {
    static let slash = UInt8(ascii: "/")
    static let plus = UInt8(ascii: "+")
    static let hash = UInt8(ascii: "#")
    static let dollar = UInt8(ascii: "$")

    /// A problem with one topic level (a device id), or nil when it is fine.
    public static func problemWithLevel(_ level: String) -> String? {
        let bytes = Array(level.utf8)
        if bytes.isEmpty { return "must not be empty" }
        if bytes.count > 128 { return "must be at most 128 bytes" }
        if bytes.contains(where: { $0 == slash || $0 == plus || $0 == hash || $0 == 0 }) {
            return "must be one MQTT topic level: no '/', '+', '#' or NUL, got \"\(level)\""
        }
        return problemWithCharacters(bytes)
    }

    /// A problem with a topic name used as a prefix for publishing (`keepalive`, `owntracks/me/pi`).
    public static func problemWithPrefix(_ topic: String) -> String? {
        let bytes = Array(topic.utf8)
        if bytes.isEmpty { return "must not be empty" }
        if bytes.first == dollar { return "must not start with '$' (reserved for the broker)" }
        if bytes.first == slash || bytes.last == slash { return "must not start or end with '/', got \"\(topic)\"" }
        if bytes.contains(where: { $0 == plus || $0 == hash || $0 == 0 }) {
            return "must not contain wildcards ('+', '#') or NUL, got \"\(topic)\""
        }
        return problemWithCharacters(bytes)
    }

    /// A problem with a subscription filter, or nil: '#' only last and alone in its level,
    /// '+' alone in its level.
    public static func problemWithFilter(_ filter: String) -> String? {
        let bytes = Array(filter.utf8)
        if bytes.isEmpty { return "must not be empty" }
        if bytes.contains(0) { return "must not contain NUL" }
        let levels = bytes.split(separator: slash, omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains(hash) && (!level.elementsEqual([hash]) || index != levels.count - 1) {
                return "'#' must be a whole level and the last one, got \"\(filter)\""
            }
            if level.contains(plus) && !level.elementsEqual([plus]) {
                return "'+' must be a whole level, got \"\(filter)\""
            }
        }
        return problemWithCharacters(bytes)
    }

    /// Whether libmosquitto accepts `bytes` as an MQTT UTF-8 string: well-formed UTF-8 without
    /// U+0000, control characters or non-characters (`mosquitto_validate_utf8`). It refuses to
    /// publish to a topic that is not; a broker disconnects a client that sends one.
    public static func isValidMQTTString(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= 65_535 else { return false }
        if bytes.isEmpty { return true }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { MosquittoError.failure(mosquitto_validate_utf8($0.baseAddress, Int32($0.count))) == nil }
        }
    }

    private static func problemWithCharacters(_ bytes: [UInt8]) -> String? {
        isValidMQTTString(bytes) ? nil : "must be at most 65535 bytes of UTF-8 without control characters or non-characters"
    }

    /// Whether `topic` is `root` or below it (`root/…`), byte for byte.
    public static func isWithin(_ topic: [UInt8], tree root: [UInt8]) -> Bool {
        topic.starts(with: root) && (topic.count == root.count || topic[root.count] == slash)
    }

    /// Whether `topic` matches the subscription `filter`, level by level, byte for byte.
    public static func matches(filter: String, topic: String) -> Bool {
        matches(filter: Array(filter.utf8), topic: Array(topic.utf8))
    }

    public static func matches(filter: [UInt8], topic: [UInt8]) -> Bool {
        let filterLevels = filter.split(separator: slash, omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: slash, omittingEmptySubsequences: false)
        if topic.first == dollar && (filter.first == plus || filter.first == hash) { return false }
        for (index, level) in filterLevels.enumerated() {
            if level.elementsEqual([hash]) { return true }
            guard index < topicLevels.count else { return false }
            if !level.elementsEqual([plus]) && !level.elementsEqual(topicLevels[index]) { return false }
        }
        return filterLevels.count == topicLevels.count
    }
}
