import Foundation

/// A real `mosquitto_sub` on a topic filter, its messages collected as they arrive.
public final class MQTTSubscriber: Sendable {
    public struct Message: Sendable, CustomStringConvertible {
        public let topic: String
        public let retained: Bool
        public let payload: String
        /// MQTT v5 properties as mosquitto_sub prints them (empty when absent).
        public var contentType: String = ""
        public var correlationData: String = ""
        /// `key:value` pairs.
        public var userProperties: String = ""
        public var description: String { "\(topic) \(retained ? "(retained) " : "")\(payload)" }

        /// The payload as a JSON object, or nil.
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any]
        }
    }

    private let process: ManagedProcess
    private static let separator = "\u{1F}"

    /// Subscribes at QoS 1; with `clientID` and `persistent` it keeps a session across reconnects.
    public init(port: Int, filter: String, clientID: String? = nil, persistent: Bool = false, protocolVersion: String = "5",
                extraArguments: [String] = []) async throws {
        var arguments = ["-d", "-h", "127.0.0.1", "-p", "\(port)", "-t", filter, "-q", "1", "-V", protocolVersion, "-v",
                         "-F", "%t\(Self.separator)%r\(Self.separator)%C\(Self.separator)%D\(Self.separator)%P\(Self.separator)%p"]
        if let clientID { arguments += ["-i", clientID] }
        if persistent { arguments += ["-c"] + (protocolVersion == "5" ? ["-x", "3600"] : []) }
        // stdbuf: mosquitto_sub's stdout is a pipe here, which libc would otherwise buffer.
        process = try ManagedProcess(
            name: "mosquitto_sub \(filter)", executable: Tools.stdbuf,
            arguments: ["-oL", Tools.mosquittoSub] + arguments + extraArguments)
        // With -d mosquitto_sub reports the SUBACK: from then on nothing published is missed.
        // (Debug lines lack the field separator, so `messages` skips them.)
        try await process.waitForLine(containing: "received SUBACK", timeout: 30)
    }

    public var messages: [Message] {
        process.lines.compactMap { line in
            let parts = line.components(separatedBy: Self.separator)
            guard parts.count >= 6 else { return nil }
            return Message(
                topic: parts[0], retained: parts[1] == "1", payload: parts[5...].joined(separator: Self.separator),
                contentType: parts[2], correlationData: parts[3], userProperties: parts[4])
        }
    }

    /// Waits until a message satisfies `predicate`; returns it.
    @discardableResult
    public func waitFor(timeout: Double = 10, _ what: String, _ predicate: (Message) -> Bool) async throws -> Message {
        var found: Message?
        try await Wait.until(timeout: timeout, "a message: \(what); received:\n\(messages.suffix(10).map(\.description).joined(separator: "\n"))") {
            found = messages.first(where: predicate)
            return found != nil
        }
        return found!
    }

    /// Waits until at least `count` messages satisfy `predicate`; returns them in arrival order.
    public func waitFor(count: Int, timeout: Double = 10, _ what: String, _ predicate: (Message) -> Bool) async throws -> [Message] {
        try await Wait.until(timeout: timeout, "\(count) messages: \(what); got \(messages.filter(predicate).count)") {
            messages.filter(predicate).count >= count
        }
        return messages.filter(predicate)
    }

    public func stop() { process.stop() }

    /// Everything mosquitto_sub printed (its -d debug lines too), for failure messages.
    public var log: String { process.text }

    deinit { process.stop(timeout: 2) }
}
