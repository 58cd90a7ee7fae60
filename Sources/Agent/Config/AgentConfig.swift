import Foundation
import Store

/// The store module's `Store.Synchronous`, named where `Store` means `AgentConfig.Store`.
public typealias StoreSynchronous = Store.Synchronous

/// The validated configuration of one agent: every key of `config.toml`, with its default applied.
///
/// Built only by `ConfigLoader`, so a value of this type has passed validation.
public struct AgentConfig: Sendable, Equatable {
    public var device: Device
    public var mqtt: MQTT
    public var gps: GPS
    public var hr: HeartRate
    public var store: Store
    public var schedule: Schedule
    public var query: Query
    public var health: Health
    var steps: StepSettings
    var workouts: WorkoutSettings
    public var homeAssistant: HomeAssistant
    var person = PersonSettings()
    /// The settings sensors declare in their own files (`ConfiguredSensor`).
    var sensors = SensorSettings()
    /// `keepalive archive` only (docs/fleet.md).
    public var archive: Archive

    public struct Device: Sendable, Equatable {
        /// One MQTT topic level; defaults to the hostname.
        public var id: String
        /// IANA zone name; local days (and so daily aggregates) are cut in this zone.
        public var timezone: String
    }

    public enum ProtocolVersion: Int, Sendable, Equatable {
        case v311 = 311
        case v5 = 5
    }

    public struct MQTT: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var protocolVersion: ProtocolVersion
        public var tls: Bool
        public var cafile: String
        public var certfile: String
        public var keyfile: String
        public var tlsInsecure: Bool
        public var username: String
        /// A file holding the password; the password itself never appears in the config.
        public var passwordFile: String
        /// Where the password is read from: the systemd credential `mqtt.password` when given,
        /// else `passwordFile`; nil without a password.
        public var password: SecretFile?
        /// Where the TLS client key is read from: the systemd credential `mqtt.key` when given,
        /// else `keyfile`; nil without a client certificate.
        public var clientKey: SecretFile?
        public var prefix: String
        public var clientID: String
        public var keepaliveS: Int
        public var sessionExpiryS: Int
        public var reconnectMinS: Double
        public var reconnectMaxS: Double
        public var maxInflight: Int
        /// Optional OwnTracks mirror, e.g. `owntracks/alice/pi`; empty = off.
        public var owntracksTopic: String
    }

    public struct GPS: Sendable, Equatable {
        public var enabled: Bool
        public var host: String
        public var port: Int
        public var fixTimeoutS: Double
        public var maxRateHz: Double
        public var reconnectMaxS: Double
    }

    public enum HRTransport: String, Sendable, Equatable, CaseIterable {
        case mqtt, serial, command, udp, none
    }

    public struct HeartRate: Sendable, Equatable {
        public var transport: HRTransport
        public var topic: String
        public var serialDevice: String
        public var baud: Int
        public var command: [String]
        public var udpPort: Int
        public var stallTimeoutS: Double
        public var reacquireMaxS: Double
        public var maxLineBytes: Int
    }

    /// `[store] synchronous`: the store's own setting, one enum for the config and the store.
    public typealias Synchronous = StoreSynchronous

    public struct Store: Sendable, Equatable {
        public var path: String
        public var synchronous: Synchronous
        public var batchMs: Int
        /// Seconds a commit window waits in the ingest journal before it is folded into the
        /// tables; 0 writes the tables at every commit (docs/storage.md).
        public var foldS: Int
        public var retentionDays: Int
        /// 0 = no cap.
        public var maxBytes: Int
        /// Hours a delivered message is kept for resend requests (`<root>/selection/seq`);
        /// 0: deleted at its PUBACK, none kept.
        public var keepPublishedH: Int
        /// At most this many delivered messages are kept; the oldest go first.
        public var keepPublishedMax: Int
    }

    public struct Schedule: Sendable, Equatable {
        public var locationIntervalS: Int
        public var todayIntervalS: Int
        public var statusIntervalS: Int
        public var dailyGraceS: Int
    }

    public struct Query: Sendable, Equatable {
        /// Topics answered besides the device's own `<prefix>/<device>/selection/date`.
        public var extraTopics: [String]
        public var ratePerS: Double
        public var burst: Int
        public var maxReplyBytes: Int
        /// MQTT filters a reply topic must match; empty: any topic outside the refused ones
        /// (see `ReplyRouting`).
        public var replyTopics: [String]
    }

    public struct Health: Sendable, Equatable {
        public var maxHR: Int
        public var restingHR: Int
        /// The heart-rate rule inside the night (docs/sleep.md): on by default.
        public var sleepHeartRateRule = true
    }

    /// MQTT discovery for Home Assistant (docs/contract.md, "Home Assistant").
    public struct HomeAssistant: Sendable, Equatable {
        public var enabled: Bool
        public var discoveryPrefix: String
        /// Where Home Assistant announces itself (its MQTT birth message).
        public var birthTopic: String
    }

    /// The fleet archive (`keepalive archive`, docs/fleet.md): where it writes.
    public struct Archive: Sendable, Equatable {
        /// A libpq connection string (`host=/run/postgresql dbname=keepalive`); empty: libpq's
        /// environment (PGHOST, PGDATABASE, …) and defaults.
        public var conninfo: String
        /// How often the archive publishes its counters and seq gaps on `<prefix>/archive/status`.
        public var statusIntervalS: Int
        /// The cluster's other nodes (`host:port`), tried in turn when `[mqtt]`'s cannot be reached.
        public var nodes: [String] = []
    }
}

extension AgentConfig {
    /// `<prefix>/<device>`, the root of every topic the agent publishes.
    public var topicRoot: String { "\(mqtt.prefix)/\(device.id)" }
}

extension AgentConfig {
    /// Every field empty or zero: what `ConfigLoader` fills in key by key (`ConfigKeys`, where
    /// the defaults are).
    static var blank: AgentConfig {
        AgentConfig(
            device: Device(id: "", timezone: ""),
            mqtt: MQTT(
                host: "", port: 0, protocolVersion: .v5, tls: false, cafile: "", certfile: "", keyfile: "", tlsInsecure: false,
                username: "", passwordFile: "", password: nil, clientKey: nil, prefix: "", clientID: "", keepaliveS: 0,
                sessionExpiryS: 0, reconnectMinS: 0, reconnectMaxS: 0, maxInflight: 0, owntracksTopic: ""),
            gps: GPS(enabled: false, host: "", port: 0, fixTimeoutS: 0, maxRateHz: 0, reconnectMaxS: 0),
            hr: HeartRate(
                transport: .none, topic: "", serialDevice: "", baud: 0, command: [], udpPort: 0, stallTimeoutS: 0, reacquireMaxS: 0,
                maxLineBytes: 0),
            store: Store(path: "", synchronous: .full, batchMs: 0, foldS: 0, retentionDays: 0, maxBytes: 0, keepPublishedH: 0, keepPublishedMax: 0),
            schedule: Schedule(locationIntervalS: 0, todayIntervalS: 0, statusIntervalS: 0, dailyGraceS: 0),
            query: Query(extraTopics: [], ratePerS: 0, burst: 0, maxReplyBytes: 0, replyTopics: []),
            health: Health(maxHR: 0, restingHR: 0),
            steps: StepSettings(),
            workouts: WorkoutSettings(),
            homeAssistant: HomeAssistant(enabled: false, discoveryPrefix: "", birthTopic: ""),
            archive: Archive(conninfo: "", statusIntervalS: 0))
    }
}
