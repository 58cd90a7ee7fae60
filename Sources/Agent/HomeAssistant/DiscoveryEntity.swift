/// One entity the agent announces to Home Assistant: what HA calls it, which of the agent's
/// topics it reads and how, and what HA should make of the value.
struct DiscoveryEntity: Sendable, Equatable {
    enum Component: String, Sendable {
        case sensor
        case binarySensor = "binary_sensor"
        case deviceTracker = "device_tracker"
    }

    /// The agent's topic an entity reads, below `<prefix>/<device>/`.
    enum Source: String, Sendable {
        case status
        case location
        case healthToday = "health/today"
        /// Retained by the workouts feature (issue 20) once it lands.
        case workoutLast = "workout/last"
        /// Retained `gear/<id>`, one per registered pair (`topic` names it).
        case gear
    }

    /// What must be configured for the entity to mean anything; others are not announced (and
    /// removed from HA when a config change turns their source off).
    enum Requirement: Sendable {
        case always
        /// `[gps] enabled`.
        case gps
        /// A Bluetooth bridge: `[hr] transport` other than "none" (heart rate, and the step and
        /// sleep figures that come from the same sensors).
        case bridge
        case gpsOrBridge
    }

    var component: Component
    /// Unique within the device; the last level of the config topic.
    var objectID: String
    var name: String
    var source: Source
    /// A `value_template` for sensors and binary sensors, a `json_attributes_template` for the tracker.
    var template: String
    var deviceClass: String? = nil
    var stateClass: String? = nil
    var unit: String? = nil
    var displayPrecision: Int? = nil
    var icon: String? = nil
    /// `diagnostic` for the agent's own health figures.
    var entityCategory: String? = nil
    var requirement: Requirement = .always
    /// The topic below the root when it is not one of `Source`'s (a pair of shoes' `gear/<id>`).
    var topic: String? = nil
    /// A `json_attributes_template` on the same topic, for a sensor whose value has context (a
    /// pair's limit next to its kilometres).
    var attributesTemplate: String? = nil

    func isEnabled(gps: Bool, bridge: Bool) -> Bool {
        switch requirement {
        case .always: true
        case .gps: gps
        case .bridge: bridge
        case .gpsOrBridge: gps || bridge
        }
    }
}
