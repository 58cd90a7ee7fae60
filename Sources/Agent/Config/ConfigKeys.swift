import StepCounting

/// Every key of `config.toml`, in the order of the file and of `check-config`'s summary. The
/// defaults here are what a Pi needs out of the box (broker and gpsd on 127.0.0.1, the store
/// under /var/lib/keepalive); the root `config.toml` documents the same values (a test holds
/// them equal). Checks that involve more than one key are in `ConfigLoader`.
enum ConfigKeys {
    static var all: [ConfigKey] { device + mqtt + gps + hr + store + schedule + query + health + steps + ConfiguredSensors.keys + workouts + gear + homeAssistant + person + archive }

    /// The sections, in order.
    static var sections: [String] {
        var names: [String] = []
        for key in all where names.last != key.section { names.append(key.section) }
        return names
    }

    typealias K = ConfigKey

    static var device: [K] {
        [
            // Empty: the hostname and the system's zone (`SystemDefaults`), filled in by the loader.
            .string("device", "id", \.device.id, default: ""),
            .string("device", "timezone", \.device.timezone, default: ""),
        ]
    }

    static var mqtt: [K] {
        [
            .string("mqtt", "host", \.mqtt.host, default: "127.0.0.1"),
            .int("mqtt", "port", \.mqtt.port, default: 1883, in: 1...65535),
            K(section: "mqtt", name: "protocol", read: { section, config in
                let number = try section.int("protocol", default: 5, in: Int.min...Int.max)
                guard let version = AgentConfig.ProtocolVersion(rawValue: number) else {
                    throw section.error("protocol", "must be 5 (MQTT v5) or 311 (MQTT 3.1.1), got \(number)")
                }
                config.mqtt.protocolVersion = version
            }, render: { "\($0.mqtt.protocolVersion.rawValue)" }),
            .bool("mqtt", "tls", \.mqtt.tls, default: false),
            .string("mqtt", "cafile", \.mqtt.cafile, default: ""),
            .string("mqtt", "certfile", \.mqtt.certfile, default: ""),
            K(section: "mqtt", name: "keyfile", read: { $1.mqtt.keyfile = try $0.string("keyfile", default: "") },
              render: { K.quoted($0.mqtt.keyfile) + fromCredential($0.mqtt.clientKey) }),
            .bool("mqtt", "tls_insecure", \.mqtt.tlsInsecure, default: false),
            .string("mqtt", "username", \.mqtt.username, default: ""),
            K(section: "mqtt", name: "password_file", read: { $1.mqtt.passwordFile = try $0.string("password_file", default: "") },
              render: { K.quoted($0.mqtt.passwordFile) + fromCredential($0.mqtt.password) }),
            .string("mqtt", "prefix", \.mqtt.prefix, default: "keepalive"),
            // Empty: "keepalive-<device id>", filled in by the loader.
            .string("mqtt", "client_id", \.mqtt.clientID, default: ""),
            .int("mqtt", "keepalive_s", \.mqtt.keepaliveS, default: 60, in: 5...65535),
            .int("mqtt", "session_expiry_s", \.mqtt.sessionExpiryS, default: 604_800, in: 0...4_294_967_295),
            .double("mqtt", "reconnect_min_s", \.mqtt.reconnectMinS, default: 1, in: 0.1...3600),
            .double("mqtt", "reconnect_max_s", \.mqtt.reconnectMaxS, default: 60, in: 0.1...3600),
            .int("mqtt", "max_inflight", \.mqtt.maxInflight, default: 20, in: 1...65535),
            .string("mqtt", "owntracks_topic", \.mqtt.owntracksTopic, default: ""),
        ]
    }

    /// A comment saying a systemd credential stands in for the configured file.
    private static func fromCredential(_ secret: SecretFile?) -> String {
        guard let secret, case .credential(let name) = secret.origin else { return "" }
        return "  # unused: systemd credential \(name) stands in"
    }

    static var gps: [K] {
        [
            .bool("gps", "enabled", \.gps.enabled, default: true),
            .string("gps", "host", \.gps.host, default: "127.0.0.1"),
            .int("gps", "port", \.gps.port, default: 2947, in: 1...65535),
            .double("gps", "fix_timeout_s", \.gps.fixTimeoutS, default: 30, in: 1...3600),
            .double("gps", "max_rate_hz", \.gps.maxRateHz, default: 1, in: 0.01...50),
            .double("gps", "reconnect_max_s", \.gps.reconnectMaxS, default: 60, in: 1...3600),
        ]
    }

    static var hr: [K] {
        [
            .choice("hr", "transport", \.hr.transport, default: AgentConfig.HRTransport.mqtt),
            .string("hr", "topic", \.hr.topic, default: "hrbridge/v1/+/measurement"),
            .string("hr", "serial_device", \.hr.serialDevice, default: "/dev/ttyACM0"),
            .int("hr", "baud", \.hr.baud, default: 115_200, in: 1200...4_000_000),
            .strings("hr", "command", \.hr.command, default: []),
            .int("hr", "udp_port", \.hr.udpPort, default: 5557, in: 1...65535),
            .double("hr", "stall_timeout_s", \.hr.stallTimeoutS, default: 10, in: 1...3600),
            .double("hr", "reacquire_max_s", \.hr.reacquireMaxS, default: 60, in: 1...3600),
            .int("hr", "max_line_bytes", \.hr.maxLineBytes, default: 4096, in: 256...1_048_576),
        ]
    }

    static var store: [K] {
        [
            .string("store", "path", \.store.path, default: "/var/lib/keepalive/keepalive.db"),
            .choice("store", "synchronous", \.store.synchronous, default: AgentConfig.Synchronous.full),
            .int("store", "batch_ms", \.store.batchMs, default: 1000, in: 0...60_000),
            .int("store", "fold_s", \.store.foldS, default: 60, in: 0...3600),
            .int("store", "retention_days", \.store.retentionDays, default: 365, in: 1...36_500),
            .int("store", "max_bytes", \.store.maxBytes, default: 0, in: 0...Int.max),
            .int("store", "keep_published_h", \.store.keepPublishedH, default: 48, in: 0...8760),
            .int("store", "keep_published_max", \.store.keepPublishedMax, default: 20_000, in: 1...10_000_000),
        ]
    }

    static var schedule: [K] {
        [
            .int("schedule", "location_interval_s", \.schedule.locationIntervalS, default: 300, in: 1...86_400),
            .int("schedule", "today_interval_s", \.schedule.todayIntervalS, default: 60, in: 1...86_400),
            .int("schedule", "status_interval_s", \.schedule.statusIntervalS, default: 60, in: 1...86_400),
            .int("schedule", "daily_grace_s", \.schedule.dailyGraceS, default: 300, in: 0...86_400),
        ]
    }

    static var query: [K] {
        [
            .strings("query", "extra_topics", \.query.extraTopics, default: []),
            .double("query", "rate_per_s", \.query.ratePerS, default: 5, in: 0.01...10_000),
            .int("query", "burst", \.query.burst, default: 20, in: 1...100_000),
            .int("query", "max_reply_bytes", \.query.maxReplyBytes, default: 1_048_576, in: 1024...268_435_455),
            .strings("query", "reply_topics", \.query.replyTopics, default: []),
        ]
    }

    static var health: [K] {
        [
            .int("health", "max_hr", \.health.maxHR, default: 190, in: 100...250),
            .int("health", "resting_hr", \.health.restingHR, default: 60, in: 25...150),
            .bool("health", "sleep_heart_rate_rule", \.health.sleepHeartRateRule, default: true),
        ]
    }

    static var steps: [K] {
        [
            .choice("steps", "cadence_unit", \.steps.defaultUnit, default: CadenceUnit.steps),
            K(section: "steps", name: "cadence_units", read: { $1.steps.cadenceUnits = try $0.choiceTable("cadence_units", of: CadenceUnit.self) },
              render: { "{ " + $0.steps.cadenceUnits.sorted { $0.key < $1.key }.map { "\(K.quoted($0.key)) = \(K.quoted($0.value.rawValue))" }.joined(separator: ", ") + " }" }),
            K(section: "steps", name: "dropout_s", read: { $1.steps.dropoutMs = Int64(try $0.double("dropout_s", default: 10, in: 1...300) * 1000) },
              render: { "\(Double($0.steps.dropoutMs) / 1000)" }),
        ]
    }

    static var workouts: [K] {
        func seconds(_ name: String, _ path: WritableKeyPath<AgentConfig, Double>, _ value: Double, _ range: ClosedRange<Double>) -> K {
            .double("workouts", name, path, default: value, in: range)
        }
        return [
            .bool("workouts", "enabled", \.workouts.enabled, default: true),
            seconds("start_moving_s", \.workouts.startMovingS, 60, 5...3600),
            .double("workouts", "pause_distance_m", \.workouts.pauseDistanceM, default: 5, in: 1...1000),
            seconds("pause_window_s", \.workouts.pauseWindowS, 10, 2...600),
            seconds("end_pause_s", \.workouts.endPauseS, 300, 10...86_400),
            seconds("merge_gap_s", \.workouts.mergeGapS, 120, 0...3600),
            seconds("min_duration_s", \.workouts.minDurationS, 600, 0...86_400),
            .double("workouts", "min_distance_m", \.workouts.minDistanceM, default: 500, in: 0...1_000_000),
            .double("workouts", "hr_reserve_fraction", \.workouts.heartRateReserveFraction, default: 0.45, in: 0.05...1),
            .double("workouts", "hr_rise_bpm", \.workouts.heartRateRiseBpm, default: 15, in: 0...100),
            .double("workouts", "walk_max_mps", \.workouts.walkMaxMps, default: 2.0, in: 0.1...50),
            .double("workouts", "run_max_mps", \.workouts.runMaxMps, default: 5.5, in: 0.1...50),
            .double("workouts", "run_min_cadence", \.workouts.runMinCadence, default: 130, in: 1...400),
            .double("workouts", "vehicle_min_mps", \.workouts.vehicleMinMps, default: 12, in: 1...500),
            .choice("workouts", "trimp_weighting", \.workouts.trimpWeighting, default: WorkoutSettings.TrimpWeighting.male),
        ]
    }

    static var gear: [K] {
        [.bool("gear", "auto_credit", \.workouts.autoCredit, default: true)]
    }

    static var homeAssistant: [K] {
        [
            .bool("homeassistant", "enabled", \.homeAssistant.enabled, default: true),
            .string("homeassistant", "discovery_prefix", \.homeAssistant.discoveryPrefix, default: "homeassistant"),
            // Home Assistant's own default, whatever its discovery prefix.
            .string("homeassistant", "birth_topic", \.homeAssistant.birthTopic, default: "homeassistant/status"),
        ]
    }

    static var person: [K] {
        [
            // 0 = unknown; else a year from PersonSettings.earliestBirthYear (ConfigLoader checks it).
            .int("person", "birth_year", \.person.birthYear, default: 0, in: 0...9999),
            .choice("person", "sex", \.person.sex, default: PersonSettings.Sex.unknown),
        ]
    }

    static var archive: [K] {
        [
            .string("archive", "conninfo", \.archive.conninfo, default: ""),
            .int("archive", "status_interval_s", \.archive.statusIntervalS, default: 60, in: 1...86_400),
            .strings("archive", "nodes", \.archive.nodes, default: []),
        ]
    }
}
