import Foundation
import Testing
import TestKit

@testable import Agent

/// The discovery configs themselves: topics and payloads as Home Assistant's MQTT discovery reads
/// them, which entities a configuration announces, the `[homeassistant]` keys. What Home
/// Assistant makes of them is checked by Home Assistant itself (HomeAssistantCheckTests).
@Suite("Home Assistant discovery documents")
struct HomeAssistantDiscoveryTests {
    func config(_ text: String = "") throws -> AgentConfig {
        try ConfigLoader.parse(text: text, file: "test.toml", system: SystemDefaults(deviceID: "pi", timezone: "UTC"))
    }

    func document(_ config: AgentConfig) -> DiscoveryDocument {
        DiscoveryDocument(
            discoveryPrefix: config.homeAssistant.discoveryPrefix, topicRoot: config.topicRoot, deviceID: config.device.id,
            version: "9.9.9")
    }

    func json(_ value: JSONValue) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(value.bytes)) as? [String: Any])
    }

    /// HA's discovery topic matcher (homeassistant/components/mqtt/discovery.py, 2024.3).
    static let levelCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")

    @Test("every config is at <prefix>/<component>/<node_id>/<object_id>/config with ids HA accepts, one shared device, availability from status")
    func configsAsHomeAssistantReadsThem() throws {
        let config = try config()
        let document = document(config)
        let entities = DiscoveryCatalog.entities(for: config)
        #expect(entities.count == 24)
        var uniqueIDs: Set<String> = []
        var devices: [String] = []
        for entity in entities {
            let topic = document.topic(for: entity)
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            #expect(levels.count == 5 && levels[0] == "homeassistant" && levels[4] == "config", "\(topic)")
            #expect(["sensor", "binary_sensor", "device_tracker"].contains(levels[1]))
            for level in levels[2...3] {
                #expect(!level.isEmpty && level.unicodeScalars.allSatisfy(Self.levelCharacters.contains), "\(topic)")
            }
            let payload = try json(document.payload(for: entity))
            let uniqueID = try #require(payload["unique_id"] as? String)
            #expect(uniqueID == "keepalive_pi_\(entity.objectID)")
            #expect(payload["object_id"] as? String == uniqueID)
            uniqueIDs.insert(uniqueID)
            let availability = try #require((payload["availability"] as? [[String: Any]])?.first)
            #expect(availability["topic"] as? String == "keepalive/pi/status")
            #expect(availability["value_template"] as? String == DiscoveryTemplate.availability)
            let device = try #require(payload["device"] as? [String: Any])
            devices.append(String(decoding: try JSONSerialization.data(withJSONObject: device, options: .sortedKeys), as: UTF8.self))
            #expect(device["identifiers"] as? [String] == ["keepalive_pi"])
            #expect((payload["origin"] as? [String: Any])?["name"] as? String == "KeepAlive")
            #expect((payload["origin"] as? [String: Any])?["sw_version"] as? String == "9.9.9")
            if entity.component == .deviceTracker {
                #expect(payload["json_attributes_topic"] as? String == "keepalive/pi/location")
                #expect(payload["source_type"] as? String == "gps")
                #expect(payload["state_topic"] == nil)
            } else {
                #expect(payload["state_topic"] as? String == "keepalive/pi/\(entity.source.rawValue)")
                #expect(payload["value_template"] as? String == entity.template)
            }
        }
        #expect(uniqueIDs.count == entities.count, "unique ids repeat")
        #expect(Set(devices).count == 1, "the device block differs between entities")
        #expect(document.configFilter == "homeassistant/+/keepalive_pi/+/config")
    }

    @Test("a device id HA would not accept in a topic level becomes one it does, the same for every entity")
    func nodeIDFromAnyDeviceID() throws {
        let config = try config("[device]\nid = \"Küche.pi 2\"\n[homeassistant]\ndiscovery_prefix = \"ha/disc\"\n")
        let document = document(config)
        #expect(document.nodeID == "keepalive_K_che_pi_2")
        let entity = try #require(DiscoveryCatalog.entities(for: config).first)
        #expect(document.topic(for: entity) == "ha/disc/device_tracker/keepalive_K_che_pi_2/location/config")
        // The topics it reads keep the device id as configured.
        #expect(try json(document.payload(for: entity))["json_attributes_topic"] as? String == "keepalive/Küche.pi 2/location")
    }

    @Test("the entities follow the configuration: GPS ones need [gps], heart-rate, step and sleep ones a bridge, none when disabled")
    func entitiesFollowTheConfiguration() throws {
        func ids(_ text: String) throws -> Set<String> { Set(DiscoveryCatalog.entities(for: try config(text)).map(\.objectID)) }
        let all = try ids("")
        let gpsOnly: Set = ["location", "distance_today", "moving_time_today", "gps_fix", "gps_satellites", "gps_fix_age"]
        let bridgeOnly: Set = [
            "heart_rate", "heart_rate_min_today", "heart_rate_avg_today", "heart_rate_max_today", "resting_heart_rate_today",
            "hrv_rmssd_today", "steps_today", "sleep_last_night", "sleep_efficiency_last_night", "strap_connected",
            "riding_distance_today", "riding_cadence_today",
        ]
        let workout: Set = ["last_workout_distance", "last_workout_duration", "last_workout_moving_time", "last_workout_trimp"]
        #expect(all == gpsOnly.union(bridgeOnly).union(workout).union(["outbox_pending", "store_size"]))
        #expect(try ids("[gps]\nenabled = false\n") == all.subtracting(gpsOnly))
        #expect(try ids("[hr]\ntransport = \"none\"\n") == all.subtracting(bridgeOnly))
        #expect(try ids("[gps]\nenabled = false\n[hr]\ntransport = \"none\"\n") == ["outbox_pending", "store_size"])
        #expect(try ids("[homeassistant]\nenabled = false\n").isEmpty)
    }

    @Test("[homeassistant]: the defaults")
    func configurationDefaults() throws {
        let defaults = try config().homeAssistant
        #expect(defaults == AgentConfig.HomeAssistant(enabled: true, discoveryPrefix: "homeassistant", birthTopic: "homeassistant/status"))
    }

    @Test("[homeassistant]: check-config's summary shows every key")
    func configurationSummary() throws {
        let summary = ConfigSummary(try config("[homeassistant]\ndiscovery_prefix = \"ha\"\n")).text
        #expect(summary.contains("[homeassistant]\nenabled = true\ndiscovery_prefix = \"ha\"\nbirth_topic = \"homeassistant/status\""))
    }

    @Test("[homeassistant]: bad values are named with their line")
    func configurationKeys() throws {
        for (text, key) in [
            ("[homeassistant]\ndiscovery_prefix = \"home/+\"\n", "discovery_prefix"),
            ("[homeassistant]\ndiscovery_prefix = \"\"\n", "discovery_prefix"),
            ("[homeassistant]\nbirth_topic = \"ha/#\"\n", "birth_topic"),
            ("[homeassistant]\nenabled = \"yes\"\n", "enabled"),
            ("[homeassistant]\nprefix = \"x\"\n", "prefix"),
        ] {
            do {
                _ = try config(text)
                Issue.record("no error for \(text)")
            } catch let error as ConfigError {
                #expect(error.key == "homeassistant.\(key)" && error.line == 2, "\(error)")
            }
        }
    }

    @Test("a query's reply never goes into Home Assistant's discovery tree or to its birth topic")
    func repliesStayOutOfDiscovery() throws {
        let routing = ReplyRouting(config: try config("[homeassistant]\ndiscovery_prefix = \"ha\"\nbirth_topic = \"hass/status\"\n"))
        for topic in ["ha/sensor/keepalive_pi/heart_rate/config", "ha", "hass/status"] {
            #expect(routing.route(responseTopic: topic, replyTo: nil).refusal?.code == .forbiddenTopic, "\(topic)")
        }
        #expect(routing.route(responseTopic: "hass/other", replyTo: nil).refusal == nil)
    }
}
