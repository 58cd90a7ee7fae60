import Bus
import Foundation

/// Turns `config.toml` into an `AgentConfig`, or one `ConfigError` naming the first bad key: the
/// keys as `ConfigKeys` declares them, section by section, then the checks that involve more
/// than one key.
public enum ConfigLoader {
    public static let defaultPath = "/etc/keepalive/config.toml"
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
        try document.rejectUnknownSections(known: ConfigKeys.sections)
        var config = AgentConfig.blank
        for name in ConfigKeys.sections {
            let section = try document.section(name)
            if name == "mqtt" { try refusePassword(in: section) }
            for key in ConfigKeys.all where key.section == name { try key.read(section, &config) }
            try section.rejectUnknownKeys()
            try check(section, &config, system: system, credentials: credentials)
        }
        return config
    }

    /// The checks of a section that involve more than one key, or the system, after its keys were read.
    private static func check(_ section: ConfigSection, _ config: inout AgentConfig, system: SystemDefaults, credentials: SystemdCredentials) throws {
        switch section.name {
        case "device": try checkDevice(section, &config.device, system: system)
        case "mqtt": try checkMQTT(section, &config.mqtt, device: config.device, credentials: credentials)
        case "gps": if config.gps.host.isEmpty { throw section.error("host", "must not be empty") }
        case "hr": try checkHeartRate(section, config.hr)
        case "store": try checkStore(section, config.store)
        case "query": try checkQuery(section, config.query, prefix: config.mqtt.prefix)
        case "health":
            if config.health.restingHR >= config.health.maxHR {
                throw section.error("resting_hr", "must be below max_hr (\(config.health.maxHR)), got \(config.health.restingHR)")
            }
        case "person":
            if config.person.birthYear != 0 && config.person.birthYear < PersonSettings.earliestBirthYear {
                throw section.error("birth_year", "must be 0 (unknown) or a year from \(PersonSettings.earliestBirthYear), got \(config.person.birthYear)")
            }
        case "homeassistant":
            if let problem = TopicRules.problemWithPrefix(config.homeAssistant.discoveryPrefix) { throw section.error("discovery_prefix", problem) }
            if let problem = TopicRules.problemWithPrefix(config.homeAssistant.birthTopic) { throw section.error("birth_topic", problem) }
        default: break
        }
    }

    private static func checkDevice(_ section: ConfigSection, _ device: inout AgentConfig.Device, system: SystemDefaults) throws {
        if device.id.isEmpty { device.id = system.deviceID }
        if device.timezone.isEmpty { device.timezone = system.timezone }
        if let problem = TopicRules.problemWithLevel(device.id) {
            throw section.error("id", problem)
        }
        if TimeZone(identifier: device.timezone) == nil {
            throw section.error("timezone", "unknown IANA time zone \"\(device.timezone)\" (e.g. \"Europe/Berlin\"; see /usr/share/zoneinfo)")
        }
    }

    private static func refusePassword(in section: ConfigSection) throws {
        guard section.contains("password") else { return }
        throw section.error(
            "password",
            "a password does not belong in config.toml (anyone may read it, and check-config prints the configuration): "
                + "put it in /etc/keepalive/mqtt.password (one line, root-owned, mode 0600), which the systemd unit hands "
                + "the agent as credential \(SystemdCredentials.password), and set password_file to that path for runs "
                + "outside systemd (deploy/README.md)")
    }

    private static func checkMQTT(
        _ section: ConfigSection, _ mqtt: inout AgentConfig.MQTT, device: AgentConfig.Device, credentials: SystemdCredentials
    ) throws {
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

    private static func checkHeartRate(_ section: ConfigSection, _ hr: AgentConfig.HeartRate) throws {
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
    }

    private static func checkStore(_ section: ConfigSection, _ store: AgentConfig.Store) throws {
        if store.path.isEmpty { throw section.error("path", "must not be empty") }
        if store.maxBytes != 0 && store.maxBytes < 1_048_576 {
            throw section.error("max_bytes", "must be 0 (no cap) or at least 1048576 (1 MiB), got \(store.maxBytes)")
        }
    }

    private static func checkQuery(_ section: ConfigSection, _ query: AgentConfig.Query, prefix: String) throws {
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
