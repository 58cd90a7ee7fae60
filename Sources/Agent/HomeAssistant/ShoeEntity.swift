import Store

/// A registered pair of shoes as a Home Assistant sensor: its kilometres (`total_km` of the
/// retained `gear/<id>`), with its limit, the share of it used, its runs and whether it is the
/// selected pair as attributes. One per pair that is not retired; a retired pair's sensor is
/// removed (an empty retained config).
enum ShoeEntity {
    /// Object ids of shoes start with this; the rest is the pair's id (letters, digits, `-`,
    /// `_`: already what HA accepts in a topic).
    static let objectPrefix = "shoe_"

    static func entity(for gear: StoredGear) -> DiscoveryEntity {
        DiscoveryEntity(
            component: .sensor, objectID: objectPrefix + gear.id, name: "Shoes \(gear.name)", source: .gear,
            template: DiscoveryTemplate.number(["total_km"], digits: 1), deviceClass: "distance",
            // Not total_increasing: moving a run to another pair takes kilometres off this one.
            stateClass: "total", unit: "km", displayPrecision: 1, icon: "mdi:shoe-sneaker", topic: "gear/\(gear.id)",
            attributesTemplate: attributes)
    }

    /// The pair's id in a config topic's object id, or nil when it is no shoe's.
    static func gearID(objectID: String) -> String? {
        guard objectID.hasPrefix(objectPrefix) else { return nil }
        let id = String(objectID.dropFirst(objectPrefix.count))
        return id.isEmpty ? nil : id
    }

    /// `limit_km` (null without one), `percent_of_limit`, `runs`, `selected`, `last_used`.
    static let attributes = "{% set d = value_json if value_json is mapping else {} %}"
        + "{% set limit = d.get('limit_km') if d.get('limit_km') is number and d.get('limit_km') > 0 else none %}"
        + "{% set km = d.get('total_km') if d.get('total_km') is number else none %}"
        + "{{ {'limit_km': limit, 'percent_of_limit': ((km / limit * 100) | round(1)) if limit is not none and km is not none else none,"
        + " 'runs': d.get('runs'), 'selected': d.get('selected'), 'last_used': d.get('last_used')} | tojson }}"
}
