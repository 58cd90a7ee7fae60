import ArgumentParser
import Bus
import Foundation
import Logging
import Supervision

/// Sends one command to the running agent over MQTT (`<root>/cmd/workout`, `<root>/cmd/gear`)
/// with the agent's own broker settings and waits for its reply on `<root>/cmd/result`, matched
/// by correlation data: the agent is the store's only writer, so changes go through it.
enum AgentCommandClient {
    struct Reply: Sendable {
        var status: Int
        var text: String
    }

    static func send(config: AgentConfig, command: String, body: JSONValue, timeoutS: Double = 10) throws -> Reply {
        let resultTopic = "\(config.topicRoot)/cmd/result"
        var options = try MQTTOptionsFactory.options(for: config, will: MQTTMessage(topic: resultTopic, payload: []))
        // Its own client id (the agent's would take over the agent's session), no will, no session.
        options.clientID = String("\(config.mqtt.clientID)-cli-\(getpid())".prefix(64))
        options.will = nil
        options.sessionExpiryS = 0
        let correlation = Array(UUID().uuidString.utf8)
        let box = ReplyBox()
        let client = MQTTClient(options: options, logger: Logger(label: "keepalive.cli") { _ in SwiftLogNoOpLogHandler() })
        client.handleOnNetworkThread(resultTopic) { message in
            guard message.properties.correlationData == correlation || config.mqtt.protocolVersion != .v5 else { return }
            let status = message.properties.userProperties.first { $0.0 == "status" }.flatMap { Int($0.1) } ?? 200
            box.fulfil(Reply(status: status, text: String(decoding: message.payload, as: UTF8.self)))
        }
        client.start()
        defer { client.stop() }
        let deadline = ContinuousClock.now + .seconds(timeoutS)
        while client.connectionState != .connected {
            guard ContinuousClock.now < deadline else {
                throw ValidationError("cannot reach the broker at \(config.mqtt.host):\(config.mqtt.port) (\(client.connectionState))")
            }
            usleep(20_000)
        }
        _ = try client.publish(MQTTMessage(
            topic: "\(config.topicRoot)/cmd/\(command)", payload: body.bytes, qos: .atLeastOnce,
            properties: MQTTProperties(contentType: "application/json", payloadIsUTF8: true, correlationData: correlation)))
        guard let reply = box.wait(until: deadline) else {
            throw ValidationError("no reply from the agent on \(resultTopic) within \(Int(timeoutS)) s: is it running, with this configuration?")
        }
        return reply
    }

    /// Prints the reply; a refusal exits 1.
    static func finish(_ reply: Reply) throws {
        FileHandle.standardOutput.write(Data((reply.text + "\n").utf8))
        if reply.status != 200 { throw ExitCode(1) }
    }

    /// The first reply, handed from the network thread to the waiting command.
    private final class ReplyBox: Sendable {
        private let condition = MonotonicCondition<Reply?>(nil)

        func fulfil(_ value: Reply) {
            condition.withLock {
                if $0.state == nil { $0.state = value }
                condition.broadcast()
            }
        }

        func wait(until deadline: ContinuousClock.Instant) -> Reply? {
            condition.withLock { locked in
                while locked.state == nil {
                    let left = deadline - ContinuousClock.now
                    guard left > .zero else { break }
                    locked.wait(timeout: left)
                }
                return locked.state
            }
        }
    }
}
