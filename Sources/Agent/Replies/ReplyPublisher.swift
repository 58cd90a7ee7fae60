import Bus
import Logging

/// Sends the one reply a request gets (queries, commands): the request's QoS, JSON or the
/// format's content type, the correlation data echoed, a v5 user property `status`, and an
/// expiry, so a reply nobody collects does not wait in a broker for ever.
package struct ReplyPublisher: Sendable {
    let client: MQTTClient
    /// "query" or "command", for the log line when a reply cannot be sent.
    let kind: String
    let logger: Logger

    package init(client: MQTTClient, kind: String, logger: Logger) {
        self.client = client
        self.kind = kind
        self.logger = logger
    }

    package func send(_ reply: QueryReply, to topic: String, correlationData: [UInt8]?, qos: MQTTQoS) {
        let message = MQTTMessage(
            topic: topic, payload: reply.body, qos: qos, retain: false,
            properties: MQTTProperties(
                contentType: reply.contentType, payloadIsUTF8: true, correlationData: correlationData,
                userProperties: [("status", String(reply.status))], messageExpiryS: 300))
        do {
            _ = try client.publish(message)
        } catch {
            logger.notice("cannot send a \(kind) reply", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }
}
