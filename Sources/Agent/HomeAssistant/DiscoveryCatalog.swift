import Store

/// Every entity the agent can announce to Home Assistant, in the order HA lists them. The list
/// is the contract's table (docs/contract.md, "Home Assistant"): keep the two together.
///
/// Figures other features are still building are declared already, reading the field names
/// their issues specify (steps: `health/today.steps`; sleep: `sleep_s`, `sleep.efficiency`;
/// workouts: retained `workout/last`): until those fields carry numbers the entities are
/// `unknown` in HA.
enum DiscoveryCatalog {
    typealias T = DiscoveryTemplate

    /// The entities `config` announces: none when Home Assistant discovery is off, else those
    /// whose source is configured.
    static func entities(for config: AgentConfig) -> [DiscoveryEntity] {
        guard config.homeAssistant.enabled else { return [] }
        return entities.filter { $0.isEnabled(gps: config.gps.enabled, bridge: config.hr.transport != .none) }
    }

    /// The core's entities, then those each other sample kind announces (`AnnouncedKind`).
    static var entities: [DiscoveryEntity] {
        core + SampleKinds.all.flatMap { ($0 as? any AnnouncedKind.Type)?.entities ?? [] }
    }

    private static let core: [DiscoveryEntity] = [
        DiscoveryEntity(
            component: .deviceTracker, objectID: "location", name: "Location", source: .location,
            template: T.trackerAttributes, icon: "mdi:map-marker", requirement: .gps),

        // Heart rate: now (from status, refreshed every status_interval_s) and today's figures.
        DiscoveryEntity(
            component: .sensor, objectID: "heart_rate", name: "Heart rate", source: .status,
            template: T.number(["hr", "bpm"], onlyWhen: (["hr", "state"], ["streaming"])),
            stateClass: "measurement", unit: "bpm", icon: "mdi:heart-pulse", requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "heart_rate_min_today", name: "Heart rate min today", source: .healthToday,
            template: T.number(["heart_rate", "min"]), stateClass: "measurement", unit: "bpm", icon: "mdi:heart-minus",
            requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "heart_rate_avg_today", name: "Heart rate average today", source: .healthToday,
            template: T.number(["heart_rate", "avg"], digits: 1), stateClass: "measurement", unit: "bpm", displayPrecision: 0,
            icon: "mdi:heart-pulse", requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "heart_rate_max_today", name: "Heart rate max today", source: .healthToday,
            template: T.number(["heart_rate", "max"]), stateClass: "measurement", unit: "bpm", icon: "mdi:heart-plus",
            requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "resting_heart_rate_today", name: "Resting heart rate today", source: .healthToday,
            template: T.number(["heart_rate", "resting"], digits: 1), stateClass: "measurement", unit: "bpm", displayPrecision: 0,
            icon: "mdi:heart", requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "hrv_rmssd_today", name: "HRV (RMSSD) today", source: .healthToday,
            template: T.number(["heart_rate", "rmssd_ms"], digits: 1), stateClass: "measurement", unit: "ms", displayPrecision: 1,
            icon: "mdi:heart-flash", requirement: .bridge),

        // Movement today.
        DiscoveryEntity(
            component: .sensor, objectID: "steps_today", name: "Steps today", source: .healthToday,
            template: T.number(["steps"]), stateClass: "total_increasing", unit: "steps", icon: "mdi:shoe-print",
            requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "distance_today", name: "Distance today", source: .healthToday,
            template: T.number(["location", "distance_m"], digits: 1), deviceClass: "distance", stateClass: "total_increasing",
            unit: "m", displayPrecision: 0, requirement: .gps),
        DiscoveryEntity(
            component: .sensor, objectID: "moving_time_today", name: "Moving time today", source: .healthToday,
            template: T.number(["location", "moving_s"]), deviceClass: "duration", stateClass: "total_increasing", unit: "s",
            icon: "mdi:run", requirement: .gps),

        // Last night's sleep (shown in health/today from the morning the night ends).
        DiscoveryEntity(
            component: .sensor, objectID: "sleep_last_night", name: "Sleep last night", source: .healthToday,
            template: T.number(["sleep_s"]), deviceClass: "duration", stateClass: "measurement", unit: "s",
            icon: "mdi:sleep", requirement: .bridge, attributesTemplate: T.sleepAttributes),
        DiscoveryEntity(
            component: .sensor, objectID: "sleep_efficiency_last_night", name: "Sleep efficiency last night",
            source: .healthToday, template: T.number(["sleep", "efficiency"], scale: 100, digits: 1), stateClass: "measurement",
            unit: "%", displayPrecision: 0, icon: "mdi:sleep", requirement: .bridge),

        // The last finished workout.
        DiscoveryEntity(
            component: .sensor, objectID: "last_workout_distance", name: "Last workout distance", source: .workoutLast,
            template: T.number(["distance_m"], digits: 1), deviceClass: "distance", stateClass: "measurement", unit: "m",
            displayPrecision: 0, requirement: .gpsOrBridge),
        DiscoveryEntity(
            component: .sensor, objectID: "last_workout_duration", name: "Last workout duration", source: .workoutLast,
            template: T.number(["elapsed_s"]), deviceClass: "duration", stateClass: "measurement", unit: "s",
            icon: "mdi:timer-outline", requirement: .gpsOrBridge),
        DiscoveryEntity(
            component: .sensor, objectID: "last_workout_moving_time", name: "Last workout moving time", source: .workoutLast,
            template: T.number(["moving_s"]), deviceClass: "duration", stateClass: "measurement", unit: "s",
            icon: "mdi:run", requirement: .gpsOrBridge),
        DiscoveryEntity(
            component: .sensor, objectID: "last_workout_trimp", name: "Last workout TRIMP", source: .workoutLast,
            template: T.number(["trimp"], digits: 1), stateClass: "measurement", displayPrecision: 0, icon: "mdi:run-fast",
            requirement: .gpsOrBridge),

        // Sensors' state.
        DiscoveryEntity(
            component: .binarySensor, objectID: "gps_fix", name: "GPS fix", source: .status,
            template: T.flag(["gps", "state"], on: ["fixed"]), icon: "mdi:crosshairs-gps", requirement: .gps),
        DiscoveryEntity(
            component: .binarySensor, objectID: "strap_connected", name: "Strap connected", source: .status,
            // Notifications arrive (with or without skin contact): the strap is connected.
            template: T.flag(["hr", "state"], on: ["streaming", "no_contact"]), deviceClass: "connectivity",
            requirement: .bridge),
        DiscoveryEntity(
            component: .sensor, objectID: "gps_satellites", name: "GPS satellites", source: .location,
            template: T.number(["sats"]), stateClass: "measurement", icon: "mdi:satellite-variant",
            entityCategory: "diagnostic", requirement: .gps),
        DiscoveryEntity(
            component: .sensor, objectID: "gps_fix_age", name: "GPS fix age", source: .status,
            template: T.number(["gps", "last_fix_age_s"]), deviceClass: "duration", stateClass: "measurement", unit: "s",
            displayPrecision: 0, entityCategory: "diagnostic", requirement: .gps),

        // The agent itself.
        DiscoveryEntity(
            component: .sensor, objectID: "outbox_pending", name: "Outbox pending", source: .status,
            template: T.number(["outbox", "pending"]), stateClass: "measurement", icon: "mdi:tray-full",
            entityCategory: "diagnostic"),
        DiscoveryEntity(
            component: .sensor, objectID: "store_size", name: "Store size", source: .status,
            template: T.number(["store", "bytes"]), deviceClass: "data_size", stateClass: "measurement", unit: "B",
            displayPrecision: 0, entityCategory: "diagnostic"),
    ]
}
