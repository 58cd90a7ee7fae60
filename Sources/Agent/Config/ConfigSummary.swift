/// The effective configuration as `check-config` prints it: every value after defaults,
/// in TOML form. The MQTT password is never read here, only the path of its file (and whether a
/// systemd credential stands in for it).
struct ConfigSummary {
    let text: String

    init(_ config: AgentConfig) {
        func quoted(_ value: String) -> String { "\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" }
        func list(_ values: [String]) -> String { "[" + values.map(quoted).joined(separator: ", ") + "]" }
        /// A comment saying a systemd credential stands in for the configured file.
        func fromCredential(_ secret: SecretFile?) -> String {
            guard let secret, case .credential(let name) = secret.origin else { return "" }
            return "  # unused: systemd credential \(name) stands in"
        }
        let c = config
        text = """
            [device]
            id = \(quoted(c.device.id))
            timezone = \(quoted(c.device.timezone))
            [mqtt]
            host = \(quoted(c.mqtt.host))
            port = \(c.mqtt.port)
            protocol = \(c.mqtt.protocolVersion.rawValue)
            tls = \(c.mqtt.tls)
            cafile = \(quoted(c.mqtt.cafile))
            certfile = \(quoted(c.mqtt.certfile))
            keyfile = \(quoted(c.mqtt.keyfile))\(fromCredential(c.mqtt.clientKey))
            tls_insecure = \(c.mqtt.tlsInsecure)
            username = \(quoted(c.mqtt.username))
            password_file = \(quoted(c.mqtt.passwordFile))\(fromCredential(c.mqtt.password))
            prefix = \(quoted(c.mqtt.prefix))
            client_id = \(quoted(c.mqtt.clientID))
            keepalive_s = \(c.mqtt.keepaliveS)
            session_expiry_s = \(c.mqtt.sessionExpiryS)
            reconnect_min_s = \(c.mqtt.reconnectMinS)
            reconnect_max_s = \(c.mqtt.reconnectMaxS)
            max_inflight = \(c.mqtt.maxInflight)
            owntracks_topic = \(quoted(c.mqtt.owntracksTopic))
            [gps]
            enabled = \(c.gps.enabled)
            host = \(quoted(c.gps.host))
            port = \(c.gps.port)
            fix_timeout_s = \(c.gps.fixTimeoutS)
            max_rate_hz = \(c.gps.maxRateHz)
            reconnect_max_s = \(c.gps.reconnectMaxS)
            [hr]
            transport = \(quoted(c.hr.transport.rawValue))
            topic = \(quoted(c.hr.topic))
            serial_device = \(quoted(c.hr.serialDevice))
            baud = \(c.hr.baud)
            command = \(list(c.hr.command))
            udp_port = \(c.hr.udpPort)
            stall_timeout_s = \(c.hr.stallTimeoutS)
            reacquire_max_s = \(c.hr.reacquireMaxS)
            max_line_bytes = \(c.hr.maxLineBytes)
            [store]
            path = \(quoted(c.store.path))
            synchronous = \(quoted(c.store.synchronous.rawValue))
            batch_ms = \(c.store.batchMs)
            retention_days = \(c.store.retentionDays)
            max_bytes = \(c.store.maxBytes)
            [schedule]
            location_interval_s = \(c.schedule.locationIntervalS)
            today_interval_s = \(c.schedule.todayIntervalS)
            status_interval_s = \(c.schedule.statusIntervalS)
            daily_grace_s = \(c.schedule.dailyGraceS)
            [query]
            extra_topics = \(list(c.query.extraTopics))
            rate_per_s = \(c.query.ratePerS)
            burst = \(c.query.burst)
            max_reply_bytes = \(c.query.maxReplyBytes)
            reply_topics = \(list(c.query.replyTopics))
            [health]
            max_hr = \(c.health.maxHR)
            resting_hr = \(c.health.restingHR)
            [steps]
            cadence_unit = \(quoted(c.steps.defaultUnit.rawValue))
            cadence_units = { \(c.steps.cadenceUnits.sorted { $0.key < $1.key }.map { "\(quoted($0.key)) = \(quoted($0.value.rawValue))" }.joined(separator: ", ")) }
            dropout_s = \(Double(c.steps.dropoutMs) / 1000)
            [homeassistant]
            enabled = \(c.homeAssistant.enabled)
            discovery_prefix = \(quoted(c.homeAssistant.discoveryPrefix))
            birth_topic = \(quoted(c.homeAssistant.birthTopic))
            """
    }
}
