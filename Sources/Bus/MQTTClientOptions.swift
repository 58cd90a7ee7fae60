/// How to reach the broker and who to be there.
public struct MQTTClientOptions: Sendable {
    public var host: String
    public var port: Int
    public var clientID: String
    /// 5 for MQTT v5, 311 for 3.1.1.
    public var protocolVersion: Int
    public var keepaliveS: Int
    /// v5 Session Expiry Interval; with 3.1.1 a non-zero value means a persistent session.
    public var sessionExpiryS: UInt32
    public var username: String?
    public var password: String?
    public var tls: TLS?
    /// Set before every connect, so the broker announces it if the agent vanishes.
    public var will: MQTTMessage?
    public var reconnectMinS: Double
    public var reconnectMaxS: Double
    /// TCP_NODELAY, and TCP_QUICKACK re-armed after every read and write: no small packet waits
    /// for an acknowledgement (Nagle) and none of ours is held back (delayed ACK). Off only to
    /// measure what a client with the kernel's defaults sees.
    public var lowLatencyTCP: Bool
    /// v5 Receive Maximum: QoS 1 messages the broker may have sent this client and not yet seen
    /// acknowledged. While the network thread waits for a consumer that is behind, at most this
    /// many sit in the socket and the broker queues the rest.
    public var receiveMaximum: UInt16 = 20
    /// Further brokers of one cluster, tried in turn after `host`/`port`: a connection that fails
    /// before it is up moves on to the next one; a connection lost once up tries its own broker
    /// first. Empty (one broker) unless set.
    public var alternateBrokers: [(host: String, port: Int)] = []

    /// `host`/`port` first, then `alternateBrokers`.
    var brokers: [(host: String, port: Int)] { [(host, port)] + alternateBrokers }

    public struct TLS: Sendable {
        public var cafile: String
        public var certfile: String?
        public var keyfile: String?
        /// Skip host name verification: only by explicit choice.
        public var insecure: Bool

        public init(cafile: String, certfile: String? = nil, keyfile: String? = nil, insecure: Bool = false) {
            self.cafile = cafile
            self.certfile = certfile
            self.keyfile = keyfile
            self.insecure = insecure
        }
    }

    public init(
        host: String, port: Int, clientID: String, protocolVersion: Int = 5, keepaliveS: Int = 60,
        sessionExpiryS: UInt32 = 604_800, username: String? = nil, password: String? = nil, tls: TLS? = nil,
        will: MQTTMessage? = nil, reconnectMinS: Double = 1, reconnectMaxS: Double = 60, lowLatencyTCP: Bool = true
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.keepaliveS = keepaliveS
        self.sessionExpiryS = sessionExpiryS
        self.username = username
        self.password = password
        self.tls = tls
        self.will = will
        self.reconnectMinS = reconnectMinS
        self.reconnectMaxS = reconnectMaxS
        self.lowLatencyTCP = lowLatencyTCP
    }
}
