"""What Home Assistant must show for each entity the agent announces, written from the contract
(docs/contract.md, "Home Assistant") independently of the agent's own catalogue: component, device
class, state class, unit, and the state expected from the payloads the agent published.

`value` maps the captured payloads to the expected HA state: a number (compared numerically), a
string ("on", "off"), or None for "unknown" (the field is null or absent).
"""


def field(payload, *path):
    for key in path:
        if not isinstance(payload, dict):
            return None
        payload = payload.get(key)
    return payload if isinstance(payload, (int, float)) and not isinstance(payload, bool) else None


def rounded(value, digits):
    return None if value is None else round(value, digits)


def scaled(value, factor, digits):
    return None if value is None else round(value * factor, digits)


def streaming_bpm(status):
    hr = (status or {}).get("hr") or {}
    return field(hr, "bpm") if hr.get("state") == "streaming" else None


def flag(value, on):
    return None if not isinstance(value, str) else ("on" if value in on else "off")


# object_id: (component, device_class, state_class, unit, source topic, value from that payload, needs)
# needs: "gps" (only with [gps] enabled), "bridge" (a heart-rate bridge), "gps_or_bridge" (either),
# None (always). HomeAssistantCatalogListsTests holds these columns to the agent's catalogue.
ENTITIES = {
    "location": ("device_tracker", None, None, None, "location", None, "gps"),
    "heart_rate": ("sensor", None, "measurement", "bpm", "status", streaming_bpm, "bridge"),
    "heart_rate_min_today": ("sensor", None, "measurement", "bpm", "health/today", lambda p: field(p, "heart_rate", "min"), "bridge"),
    "heart_rate_avg_today": ("sensor", None, "measurement", "bpm", "health/today", lambda p: rounded(field(p, "heart_rate", "avg"), 1), "bridge"),
    "heart_rate_max_today": ("sensor", None, "measurement", "bpm", "health/today", lambda p: field(p, "heart_rate", "max"), "bridge"),
    "resting_heart_rate_today": ("sensor", None, "measurement", "bpm", "health/today", lambda p: rounded(field(p, "heart_rate", "resting"), 1), "bridge"),
    "hrv_rmssd_today": ("sensor", None, "measurement", "ms", "health/today", lambda p: rounded(field(p, "heart_rate", "rmssd_ms"), 1), "bridge"),
    "steps_today": ("sensor", None, "total_increasing", "steps", "health/today", lambda p: field(p, "steps"), "bridge"),
    "distance_today": ("sensor", "distance", "total_increasing", "m", "health/today", lambda p: rounded(field(p, "location", "distance_m"), 1), "gps"),
    "moving_time_today": ("sensor", "duration", "total_increasing", "s", "health/today", lambda p: field(p, "location", "moving_s"), "gps"),
    "sleep_last_night": ("sensor", "duration", "measurement", "s", "health/today", lambda p: field(p, "sleep_s"), "bridge"),
    "sleep_efficiency_last_night": ("sensor", None, "measurement", "%", "health/today", lambda p: scaled(field(p, "sleep", "efficiency"), 100, 1), "bridge"),
    "last_workout_distance": ("sensor", "distance", "measurement", "m", "workout/last", lambda p: rounded(field(p, "distance_m"), 1), "gps_or_bridge"),
    "last_workout_duration": ("sensor", "duration", "measurement", "s", "workout/last", lambda p: field(p, "elapsed_s"), "gps_or_bridge"),
    "last_workout_moving_time": ("sensor", "duration", "measurement", "s", "workout/last", lambda p: field(p, "moving_s"), "gps_or_bridge"),
    "last_workout_trimp": ("sensor", None, "measurement", None, "workout/last", lambda p: rounded(field(p, "trimp"), 1), "gps_or_bridge"),
    "gps_fix": ("binary_sensor", None, None, None, "status", lambda p: flag(((p or {}).get("gps") or {}).get("state"), ["fixed"]), "gps"),
    "strap_connected": ("binary_sensor", "connectivity", None, None, "status",
                        lambda p: flag(((p or {}).get("hr") or {}).get("state"), ["streaming", "no_contact"]), "bridge"),
    "gps_satellites": ("sensor", None, "measurement", None, "location", lambda p: field(p, "sats"), "gps"),
    "gps_fix_age": ("sensor", "duration", "measurement", "s", "status", lambda p: field(p, "gps", "last_fix_age_s"), "gps"),
    "outbox_pending": ("sensor", None, "measurement", None, "status", lambda p: field(p, "outbox", "pending"), None),
    "store_size": ("sensor", "data_size", "measurement", "B", "status", lambda p: field(p, "store", "bytes"), None),
    "riding_distance_today": ("sensor", "distance", "total_increasing", "m", "health/today", lambda p: rounded(field(p, "riding", "distance_m"), 1), "bridge"),
    "riding_cadence_today": ("sensor", None, "measurement", "rpm", "health/today", lambda p: rounded(field(p, "riding", "cadence_avg_rpm"), 1), "bridge"),
}

# Absent from the payloads at first: last night's sleep (the check sends no night) and the last
# workout (until the check starts and stops one by command), and the riding figures (the check sends
# no bike sensor). Steps are real: the check sends a foot pod.
PENDING = ["sleep_last_night", "sleep_efficiency_last_night", "riding_distance_today", "riding_cadence_today",
           "last_workout_distance", "last_workout_duration", "last_workout_moving_time", "last_workout_trimp"]


def expected_ids(gps=True, bridge=True):
    return {object_id for object_id, spec in ENTITIES.items()
            if spec[6] is None or (spec[6] == "gps" and gps) or (spec[6] == "bridge" and bridge)
            or (spec[6] == "gps_or_bridge" and (gps or bridge))}


def tracker_attributes(location):
    """The attributes HA's tracker must carry for a `location` payload (OwnTracks fields)."""
    if not isinstance(location, dict) or field(location, "lat") is None or field(location, "lon") is None:
        return {"stale": True}
    attributes = {"latitude": location["lat"], "longitude": location["lon"], "gps_accuracy": field(location, "acc") or 0,
                  "stale": location.get("stale") is True}
    for name, key in (("altitude", "alt"), ("vertical_accuracy", "vac"), ("course", "cog"), ("satellites", "sats")):
        if field(location, key) is not None:
            attributes[name] = location[key]
    if field(location, "vel") is not None:
        attributes["speed"] = round(location["vel"] / 3.6, 2)
    return attributes


def state_matches(state, expected):
    """HA's state string against an expected number, "on"/"off", or None (unknown)."""
    if expected is None:
        return state == "unknown"
    if isinstance(expected, str):
        return state == expected
    try:
        return abs(float(state) - expected) < 1e-9
    except (TypeError, ValueError):
        return False
