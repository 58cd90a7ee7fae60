import Bus
import Foundation
import StepCounting

/// Turns `config.toml` into an `AgentConfig`, or one `ConfigError` naming the first bad key.
///
/// The defaults here are what a Pi needs out of the box (broker and gpsd on 127.0.0.1, the
/// store under /var/lib/keepalive); the root `config.toml` documents the same values.
public enum ConfigLoader {
    public static let defaultPath = "/etc/keepalive/config.toml"
    static let sections = ["device", "mqtt", "gps", "hr", "store", "schedule", "query", "health", "steps", "homeassistant"]

    public static func load(path: String, system: SystemDefaults = .current, credentials: SystemdCredentials = .current) throws
        -> AgentConfig
    {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read as UTF-8 text" : "no such file"
            throw ConfigError(file: path, message: "cannot read the configuration: \(reason)")
        }
        return try parse(text: text, file: path, system: system, credentials: credentials)
    }

    public static func parse(
        text: String, file: String = "config.toml", system: SystemDefaults = .current, credentials: SystemdCredentials = .current
    ) throws -> AgentConfig {
        let document = try ConfigDocument(file: file, text: text)
        try document.rejectUnknownSections(known: sections)

        let device = try readDevice(document.section("device"), system: system)
        let mqtt = try readMQTT(document.section("mqtt"), device: device, credentials: credentials)
        let config = AgentConfig(
            device: device,
            mqtt: mqtt,
            gps: try readGPS(document.section("gps")),
            hr: try readHeartRate(document.section("hr")),
            store: try readStore(document.section("store")),
            schedule: try readSchedule(document.section("schedule")),
            query: try readQuery(document.section("query"), prefix: mqtt.prefix),
            health: try readHealth(document.section("health")),
            steps: try readSteps(document.section("steps")),
            homeAssistant: try readHomeAssistant(document.section("homeassistant")))
        return config
    }

    private static func readDevice(_ section: ConfigSection, system: SystemDefaults) throws -> AgentConfig.Device {
        let id = try section.string("id", default: "")
        let timezone = try section.string("timezone", default: "")
        try section.rejectUnknownKeys()
        let device = AgentConfig.Device(
            id: id.isEmpty ? system.deviceID : id,
            timezone: timezone.isEmpty ? system.timezone : timezone)
        if let problem = TopicRules.problemWithLevel(device.id) {
            throw section.error("id", problem)
        }
        if TimeZone(identifier: device.timezone) == nil {
            throw section.error("timezone", "unknown IANA time zone \"\(device.timezone)\" (e.g. \"Europe/Berlin\"; see /usr/share/zoneinfo)")
        }
        return device
    }

    private static func readMQTT(_ section: ConfigSection, device: AgentConfig.Device, credentials: SystemdCredentials) throws
        -> AgentConfig.MQTT
    {
        if section.contains("password") {
            throw section.error(
                "password",
                "a password does not belong in config.toml (anyone may read it, and check-config prints the configuration): "
                    + "put it in /etc/keepalive/mqtt.password (one line, root-owned, mode 0600), which the systemd unit hands "
                    + "the agent as credential \(SystemdCredentials.password), and set password_file to that path for runs "
                    + "outside systemd (deploy/README.md)")
        }
        let protocolNumber = try section.int("protocol", default: 5, in: Int.min...Int.max)
        guard let protocolVersion = AgentConfig.ProtocolVersion(rawValue: protocolNumber) else {
            throw section.error("protocol", "must be 5 (MQTT v5) or 311 (MQTT 3.1.1), got \(protocolNumber)")
        }
        var mqtt = AgentConfig.MQTT(
            host: try section.string("host", default: "127.0.0.1"),
            port: try section.int("port", default: 1883, in: 1...65535),
            protocolVersion: protocolVersion,
            tls: try section.bool("tls", default: false),
            cafile: try section.string("cafile", default: ""),
            certfile: try section.string("certfile", default: ""),
            keyfile: try section.string("keyfile", default: ""),
            tlsInsecure: try section.bool("tls_insecure", default: false),
            username: try section.string("username", default: ""),
            passwordFile: try section.string("password_file", default: ""),
            password: nil,
            clientKey: nil,
            prefix: try section.string("prefix", default: "keepalive"),
            clientID: try section.string("client_id", default: ""),
            keepaliveS: try section.int("keepalive_s", default: 60, in: 5...65535),
            sessionExpiryS: try section.int("session_expiry_s", default: 604_800, in: 0...4_294_967_295),
            reconnectMinS: try section.double("reconnect_min_s", default: 1, in: 0.1...3600),
            reconnectMaxS: try section.double("reconnect_max_s", default: 60, in: 0.1...3600),
            maxInflight: try section.int("max_inflight", default: 20, in: 1...65535),
            owntracksTopic: try section.string("owntracks_topic", default: ""))
        try section.rejectUnknownKeys()

        if mqtt.host.isEmpty { throw section.error("host", "must not be empty") }
        if let problem = TopicRules.problemWithPrefix(mqtt.prefix) { throw section.error("prefix", problem) }
        if mqtt.clientID.isEmpty { mqtt.clientID = "keepalive-\(device.id)" }
        if mqtt.clientID.utf8.count > 65535 { throw section.error("client_id", "is too long") }
        if mqtt.reconnectMinS > mqtt.reconnectMaxS {
            throw section.error("reconnect_min_s", "must not exceed reconnect_max_s (\(mqtt.reconnectMaxS))")
        }
        if !mqtt.owntracksTopic.isEmpty, let problem = TopicRules.problemWithPrefix(mqtt.owntracksTopic) {
            throw section.error("owntracks_topic", problem)
        }
        if mqtt.tls {
            if mqtt.cafile.isEmpty {
                throw section.error("cafile", "is required when tls = true (libmosquitto 2.0.11 cannot reconnect with the OS store alone)")
            }
            try requireReadableFile(mqtt.cafile, key: "cafile", in: section)
            mqtt.clientKey = try secret(
                SystemdCredentials.clientKey, else: "keyfile", mqtt.keyfile, in: section, credentials: credentials)
            if mqtt.certfile.isEmpty != (mqtt.clientKey == nil) {
                throw section.error(
                    mqtt.certfile.isEmpty ? "certfile" : "keyfile",
                    "certfile and keyfile go together (the key may come as systemd credential \(SystemdCredentials.clientKey) instead)")
            }
            if !mqtt.certfile.isEmpty { try requireReadableFile(mqtt.certfile, key: "certfile", in: section) }
        }
        mqtt.password = try secret(
            SystemdCredentials.password, else: "password_file", mqtt.passwordFile, in: section, credentials: credentials)
        if let password = mqtt.password, mqtt.username.isEmpty {
            switch password.origin {
            case .configured(let key): throw section.error(key, "needs a username")
            case .credential(let name): throw section.error("username", "is needed with the password in systemd credential \(name)")
            }
        }
        return mqtt
    }

    /// The file a secret is read from: the systemd credential `name` when it was given, else the
    /// file the config key `key` names (which must then be readable), else none.
    private static func secret(
        _ name: String, else key: String, _ configured: String, in section: ConfigSection, credentials: SystemdCredentials
    ) throws -> SecretFile? {
        switch credentials.lookup(name) {
        case .present(let path):
            return SecretFile(path: path, origin: .credential(name: name))
        case .unreadable(let path):
            throw section.error(key, "systemd credential \(name) is not readable by this user: \(path)")
        case .absent:
            guard !configured.isEmpty else { return nil }
            try requireReadableFile(
                configured, key: key, in: section,
                hint: " (the systemd unit hands it to the agent as credential \(name); by hand, run as root; see deploy/README.md)")
            return SecretFile(path: configured, origin: .configured(key: key))
        }
    }

    private static func readGPS(_ section: ConfigSection) throws -> AgentConfig.GPS {
        let gps = AgentConfig.GPS(
            enabled: try section.bool("enabled", default: true),
            host: try section.string("host", default: "127.0.0.1"),
            port: try section.int("port", default: 2947, in: 1...65535),
            fixTimeoutS: try section.double("fix_timeout_s", default: 30, in: 1...3600),
            maxRateHz: try section.double("max_rate_hz", default: 1, in: 0.01...50),
            reconnectMaxS: try section.double("reconnect_max_s", default: 60, in: 1...3600))
        try section.rejectUnknownKeys()
        if gps.host.isEmpty { throw section.error("host", "must not be empty") }
        return gps
    }

    private static func readHeartRate(_ section: ConfigSection) throws -> AgentConfig.HeartRate {
        let hr = AgentConfig.HeartRate(
            transport: try section.choice("transport", default: AgentConfig.HRTransport.mqtt),
            topic: try section.string("topic", default: "hrbridge/v1/+/measurement"),
            serialDevice: try section.string("serial_device", default: "/dev/ttyACM0"),
            baud: try section.int("baud", default: 115_200, in: 1200...4_000_000),
            command: try section.stringArray("command", default: []),
            udpPort: try section.int("udp_port", default: 5557, in: 1...65535),
            stallTimeoutS: try section.double("stall_timeout_s", default: 10, in: 1...3600),
            reacquireMaxS: try section.double("reacquire_max_s", default: 60, in: 1...3600),
            maxLineBytes: try section.int("max_line_bytes", default: 4096, in: 256...1_048_576))
        try section.rejectUnknownKeys()
        switch hr.transport {
        case .mqtt:
            if let problem = TopicRules.problemWithFilter(hr.topic) { throw section.error("topic", problem) }
        case .serial:
            if hr.serialDevice.isEmpty { throw section.error("serial_device", "is required when transport = \"serial\"") }
            if LineSpeed.termios[hr.baud] == nil {
                throw section.error("baud", "must be a standard line speed (\(LineSpeed.termios.keys.sorted().map(String.init).joined(separator: ", "))), got \(hr.baud)")
            }
        case .command:
            if hr.command.isEmpty || hr.command[0].isEmpty {
                throw section.error("command", "is required when transport = \"command\": an argv array, e.g. [\"/usr/bin/keepalive-hr-bridge\", \"--ndjson\"]")
            }
        case .udp, .none:
            break
        }
        return hr
    }

    private static func readStore(_ section: ConfigSection) throws -> AgentConfig.Store {
        let store = AgentConfig.Store(
            path: try section.string("path", default: "/var/lib/keepalive/keepalive.db"),
            synchronous: try section.choice("synchronous", default: AgentConfig.Synchronous.full),
            batchMs: try section.int("batch_ms", default: 1000, in: 0...60_000),
            retentionDays: try section.int("retention_days", default: 365, in: 1...36_500),
            maxBytes: try section.int("max_bytes", default: 0, in: 0...Int.max))
        try section.rejectUnknownKeys()
        if store.path.isEmpty { throw section.error("path", "must not be empty") }
        if store.maxBytes != 0 && store.maxBytes < 1_048_576 {
            throw section.error("max_bytes", "must be 0 (no cap) or at least 1048576 (1 MiB), got \(store.maxBytes)")
        }
        return store
    }

    private static func readSchedule(_ section: ConfigSection) throws -> AgentConfig.Schedule {
        let schedule = AgentConfig.Schedule(
            locationIntervalS: try section.int("location_interval_s", default: 300, in: 1...86_400),
            todayIntervalS: try section.int("today_interval_s", default: 60, in: 1...86_400),
            statusIntervalS: try section.int("status_interval_s", default: 60, in: 1...86_400),
            dailyGraceS: try section.int("daily_grace_s", default: 300, in: 0...86_400))
        try section.rejectUnknownKeys()
        return schedule
    }

    private static func readQuery(_ section: ConfigSection, prefix: String) throws -> AgentConfig.Query {
        let query = AgentConfig.Query(
            extraTopics: try section.stringArray("extra_topics", default: []),
            ratePerS: try section.double("rate_per_s", default: 5, in: 0.01...10_000),
            burst: try section.int("burst", default: 20, in: 1...100_000),
            maxReplyBytes: try section.int("max_reply_bytes", default: 1_048_576, in: 1024...268_435_455),
            replyTopics: try section.stringArray("reply_topics", default: []))
        try section.rejectUnknownKeys()
        for topic in query.extraTopics {
            if let problem = TopicRules.problemWithFilter(topic) { throw section.error("extra_topics", "\"\(topic)\": \(problem)") }
        }
        for filter in query.replyTopics {
            if let problem = TopicRules.problemWithFilter(filter) { throw section.error("reply_topics", "\"\(filter)\": \(problem)") }
            if filter.utf8.first == UInt8(ascii: "$") {
                throw section.error("reply_topics", "\"\(filter)\" can never match: replies to $ topics are always refused")
            }
            if TopicRules.isWithin(Array(filter.utf8), tree: Array(prefix.utf8)) {
                throw section.error("reply_topics", "\"\(filter)\" can never match: replies into \(prefix)/… are always refused")
            }
        }
        return query
    }

    private static func readHealth(_ section: ConfigSection) throws -> AgentConfig.Health {
        let health = AgentConfig.Health(
            maxHR: try section.int("max_hr", default: 190, in: 100...250),
            restingHR: try section.int("resting_hr", default: 60, in: 25...150))
        try section.rejectUnknownKeys()
        if health.restingHR >= health.maxHR {
            throw section.error("resting_hr", "must be below max_hr (\(health.maxHR)), got \(health.restingHR)")
        }
        return health
    }

    private static func readSteps(_ section: ConfigSection) throws -> StepSettings {
        let steps = StepSettings(
            cadenceUnits: try section.choiceTable("cadence_units", of: CadenceUnit.self),
            defaultUnit: try section.choice("cadence_unit", default: CadenceUnit.steps),
            dropoutMs: Int64(try section.double("dropout_s", default: 10, in: 1...300) * 1000))
        try section.rejectUnknownKeys()
        return steps
    }

    private static func readHomeAssistant(_ section: ConfigSection) throws -> AgentConfig.HomeAssistant {
        let homeAssistant = AgentConfig.HomeAssistant(
            enabled: try section.bool("enabled", default: true),
            discoveryPrefix: try section.string("discovery_prefix", default: "homeassistant"),
            // Home Assistant's own default, whatever its discovery prefix.
            birthTopic: try section.string("birth_topic", default: "homeassistant/status"))
        try section.rejectUnknownKeys()
        if let problem = TopicRules.problemWithPrefix(homeAssistant.discoveryPrefix) { throw section.error("discovery_prefix", problem) }
        if let problem = TopicRules.problemWithPrefix(homeAssistant.birthTopic) { throw section.error("birth_topic", problem) }
        return homeAssistant
    }

    private static func requireReadableFile(_ path: String, key: String, in section: ConfigSection, hint: String = "") throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw section.error(key, "no such file: \(path)")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw section.error(key, "not readable by this user: \(path)\(hint)")
        }
    }
}
