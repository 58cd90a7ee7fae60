/// The Jinja templates Home Assistant runs on the agent's own payloads (its sensors read the
/// topics the agent publishes anyway, so HA adds no load on the Pi).
///
/// Every template reads its field defensively: a payload without the field, with `null` in it,
/// or not JSON at all (the will has no `hr`, `health/today` has `"steps": null` until a step
/// source exists) renders HA's `None` — state `unknown` — never a template warning in HA's log.
enum DiscoveryTemplate {
    /// A JSON path into the payload, e.g. `["heart_rate", "avg"]`.
    typealias Path = [String]

    /// `online` while the retained status says so; anything else (the will's `offline`, a
    /// payload that is not ours) makes the entity unavailable.
    static let availability = "{{ 'online' if value_json is mapping and value_json.get('state') == 'online' else 'offline' }}"

    /// The number at `path`, times `scale`, rounded to `digits`; `None` when it is not a number
    /// or when the string at `onlyWhen.path` is not one of `onlyWhen.values`.
    static func number(_ path: Path, scale: Double? = nil, digits: Int? = nil, onlyWhen: (path: Path, values: [String])? = nil) -> String {
        var value = "v"
        if let scale { value = "(v * \(scale))" }
        if let digits { value += " | round(\(digits))" }
        var condition = "v is number"
        var text = lookup(path, into: "v")
        if let onlyWhen {
            text += lookup(onlyWhen.path, into: "w")
            condition += " and w in \(list(onlyWhen.values))"
        }
        return text + "{{ \(value) if \(condition) else 'None' }}"
    }

    /// `ON` when the string at `path` is one of `on`, `OFF` when it is another string, `None`
    /// without one.
    static func flag(_ path: Path, on: [String]) -> String {
        lookup(path, into: "v") + "{{ ('ON' if v in \(list(on)) else 'OFF') if v is string else 'None' }}"
    }

    /// A `location` payload (OwnTracks: `lat`, `lon`, `acc`, `alt`, `vac`, `vel` km/h, `cog`,
    /// `sats`) as the attributes HA's GPS tracker reads: numeric `latitude`, `longitude`,
    /// `gps_accuracy` (0 when the receiver gave none, as HA itself assumes), and when known
    /// `altitude`, `vertical_accuracy`, `speed` (m/s, as HA's mobile app reports it), `course`,
    /// `satellites`; `stale` as published. The stale form without a position gives
    /// `{"stale": true}` only: HA shows the tracker as unknown rather than somewhere made up.
    static let trackerAttributes: String = {
        let optional = [("altitude", "alt", "d.alt"), ("vertical_accuracy", "vac", "d.vac"),
                        ("speed", "vel", "(d.vel / 3.6) | round(2)"), ("course", "cog", "d.cog"), ("satellites", "sats", "d.sats")]
            .map { name, key, value in "{% if d.get('\(key)') is number %}, \"\(name)\": {{ \(value) }}{% endif %}" }
            .joined()
        return "{% set d = value_json if value_json is mapping else {} %}"
            + "{% if d.get('lat') is number and d.get('lon') is number %}"
            + "{\"latitude\": {{ d.lat }}, \"longitude\": {{ d.lon }}, \"gps_accuracy\": {{ d.acc if d.get('acc') is number else 0 }}"
            + optional
            + ", \"stale\": {{ 'true' if d.get('stale') == true else 'false' }}}"
            + "{% else %}{\"stale\": true}{% endif %}"
    }()

    /// Last night's `sleep` object as the sleep sensor's attributes: `start`, `end` (null while the
    /// night is in progress), `in_progress`, `awakenings`, and `person` (what the classifier was
    /// told of the sleeper: `given`, `partial`, `unset`); each null when the payload has none.
    static let sleepAttributes = "{% set d = value_json if value_json is mapping else {} %}"
        + "{% set s = d.get('sleep') if d.get('sleep') is mapping else {} %}"
        + "{{ {'start': s.get('start'), 'end': s.get('end'), 'in_progress': s.get('in_progress'),"
        + " 'awakenings': s.get('awakenings'), 'person': s.get('person')} | tojson }}"

    /// Sets `variable` to the value at `path`, or `none` where a level is missing or not an object.
    private static func lookup(_ path: Path, into variable: String) -> String {
        var text = "{% set \(variable) = value_json if value_json is mapping else none %}"
        for key in path {
            text += "{% set \(variable) = \(variable).get('\(key)') if \(variable) is mapping else none %}"
        }
        return text
    }

    private static func list(_ values: [String]) -> String {
        "[" + values.map { "'\($0)'" }.joined(separator: ", ") + "]"
    }
}
