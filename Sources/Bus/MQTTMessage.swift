/// MQTT v5 PUBLISH properties the agent reads or writes. All optional; with MQTT 3.1.1 they
/// are dropped on the way out and absent on the way in.
public struct MQTTProperties: Sendable, Equatable {
    public var contentType: String?
    /// Payload Format Indicator 1: the payload is UTF-8.
    public var payloadIsUTF8: Bool
    public var responseTopic: String?
    public var correlationData: [UInt8]?
    public var userProperties: [(String, String)]
    public var messageExpiryS: UInt32?

    public init(
        contentType: String? = nil, payloadIsUTF8: Bool = false, responseTopic: String? = nil,
        correlationData: [UInt8]? = nil, userProperties: [(String, String)] = [], messageExpiryS: UInt32? = nil
    ) {
        self.contentType = contentType
        self.payloadIsUTF8 = payloadIsUTF8
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.userProperties = userProperties
        self.messageExpiryS = messageExpiryS
    }

    /// JSON in UTF-8, as every KeepAlive payload is.
    public static let json = MQTTProperties(contentType: "application/json", payloadIsUTF8: true)

    public static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.contentType == rhs.contentType && lhs.payloadIsUTF8 == rhs.payloadIsUTF8
            && lhs.responseTopic == rhs.responseTopic && lhs.correlationData == rhs.correlationData
            && lhs.userProperties.elementsEqual(rhs.userProperties, by: ==) && lhs.messageExpiryS == rhs.messageExpiryS
    }
}

public enum MQTTQoS: Int32, Sendable {
    case atMostOnce = 0
    case atLeastOnce = 1
}

/// A message to publish.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool
    public var properties: MQTTProperties

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false, properties: MQTTProperties = .json) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }
}

/// A message the broker delivered on one of the subscriptions, copied out of libmosquitto.
public struct MQTTIncomingMessage: Sendable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    public var properties: MQTTProperties
}
