/// The MQTT discovery messages for one device: per entity, the retained config at
/// `<discovery_prefix>/<component>/<node_id>/<object_id>/config` that Home Assistant (every
/// release since 2021, 2024.3 included) turns into an entity of one shared device.
struct DiscoveryDocument: Sendable {
    let discoveryPrefix: String
    let topicRoot: String
    let deviceID: String
    let version: String

    /// `keepalive_<device id>`, with anything HA does not accept in a topic's node id
    /// (`[a-zA-Z0-9_-]`) replaced by `_`. Also the device's identifier and the entities'
    /// unique-id prefix, so one Pi is one device in HA whatever its topics are.
    var nodeID: String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".unicodeScalars)
        let id = String(String.UnicodeScalarView(deviceID.unicodeScalars.map { allowed.contains($0) ? $0 : "_" }))
        return "keepalive_\(id)"
    }

    func topic(for entity: DiscoveryEntity) -> String {
        "\(discoveryPrefix)/\(entity.component.rawValue)/\(nodeID)/\(entity.objectID)/config"
    }

    /// Every config topic of this device: a retained config on one of these that is not
    /// announced any more belongs to an entity a config change turned off.
    var configFilter: String { "\(discoveryPrefix)/+/\(nodeID)/+/config" }

    func payload(for entity: DiscoveryEntity) -> JSONValue {
        let stateTopic = JSONValue.string("\(topicRoot)/\(entity.topic ?? entity.source.rawValue)")
        var members: [(String, JSONValue)] = [
            ("name", .string(entity.name)),
            ("unique_id", .string("\(nodeID)_\(entity.objectID)")),
            // The entity id HA makes (sensor.keepalive_pi_heart_rate), whatever the device is renamed to.
            ("object_id", .string("\(nodeID)_\(entity.objectID)")),
        ]
        switch entity.component {
        case .deviceTracker:
            members += [
                ("json_attributes_topic", stateTopic), ("json_attributes_template", .string(entity.template)),
                ("source_type", "gps"),
            ]
        case .sensor, .binarySensor:
            members += [("state_topic", stateTopic), ("value_template", .string(entity.template))]
            if let attributes = entity.attributesTemplate {
                members += [("json_attributes_topic", stateTopic), ("json_attributes_template", .string(attributes))]
            }
        }
        let optional: [(String, JSONValue?)] = [
            ("device_class", entity.deviceClass.map(JSONValue.string)),
            ("state_class", entity.stateClass.map(JSONValue.string)),
            ("unit_of_measurement", entity.unit.map(JSONValue.string)),
            ("suggested_display_precision", entity.displayPrecision.map { .int(Int64($0)) }),
            ("icon", entity.icon.map(JSONValue.string)),
            ("entity_category", entity.entityCategory.map(JSONValue.string)),
        ]
        members += optional.compactMap { key, value in value.map { (key, $0) } }
        members += [
            // The retained status: its will ({"state":"offline",…}) makes every entity unavailable.
            ("availability", .array([.object([
                ("topic", .string("\(topicRoot)/status")), ("value_template", .string(DiscoveryTemplate.availability)),
            ])])),
            ("device", device),
            ("origin", .object([("name", "KeepAlive"), ("sw_version", .string(version))])),
        ]
        return .object(members)
    }

    private var device: JSONValue {
        .object([
            ("identifiers", .array([.string(nodeID)])),
            ("name", .string("KeepAlive \(deviceID)")),
            ("manufacturer", "KeepAlive"),
            ("model", "KeepAlive agent"),
            ("sw_version", .string(version)),
        ])
    }
}
