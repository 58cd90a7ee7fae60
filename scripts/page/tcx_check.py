"""A workout's TCX from the page (web/app/tcx.js), downloaded as a person would: valid against
Garmin's TrainingCenterDatabase v2 schema (xmllint, Tests/Fixtures/xsd), and the same activity as
`keepalive export --workout ID --format tcx` writes on the Pi from the same store: sport, id, laps
(start, time, distance, heart rate, trigger) and every trackpoint's time, position, altitude and
heart rate. The differences allowed: the CLI's per-point running distance (the agent's distance
filter, in no reply), which the page leaves out, and the last lap's distance to 0.05 m (the record's
distance_m is given to 0.1 m)."""
import os
import subprocess
import xml.etree.ElementTree as ElementTree

from selenium.webdriver.common.by import By

from day_rig import FIXTURES, rig

NS = {"t": "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"}


def activity(text):
    root = ElementTree.fromstring(text.encode())
    act = root.find("t:Activities/t:Activity", NS)
    get = lambda element, path: (element.findtext(path, None, NS) or "").strip()  # noqa: E731
    laps = []
    for lap in act.findall("t:Lap", NS):
        points = [(get(p, "t:Time"), get(p, "t:Position/t:LatitudeDegrees"), get(p, "t:Position/t:LongitudeDegrees"),
                   get(p, "t:AltitudeMeters"), get(p, "t:HeartRateBpm/t:Value")) for p in lap.findall("t:Track/t:Trackpoint", NS)]
        laps.append({"start": lap.get("StartTime"), "time": get(lap, "t:TotalTimeSeconds"), "distance": get(lap, "t:DistanceMeters"),
                     "hr_avg": get(lap, "t:AverageHeartRateBpm/t:Value"), "hr_max": get(lap, "t:MaximumHeartRateBpm/t:Value"),
                     "trigger": get(lap, "t:TriggerMethod"), "points": points})
    return {"sport": act.get("Sport"), "id": get(act, "t:Id"), "laps": laps}


def check(driver, downloads, workout, agent, config):
    driver.find_element(By.CSS_SELECTOR, "#workouts button.tcx").click()
    path = rig.wait_until(lambda: next((os.path.join(downloads, f) for f in os.listdir(downloads)
                                        if f.endswith(".tcx") and not f.endswith(".crdownload")), None), 20, "the TCX download")
    schema = os.path.join(FIXTURES, "xsd", "TrainingCenterDatabasev2.xsd")
    valid = subprocess.run(["xmllint", "--noout", "--schema", schema, path], capture_output=True, text=True)
    assert valid.returncode == 0, f"the page's TCX is not valid TCX: {valid.stderr[-1500:]}"
    exported = subprocess.run([agent, "export", "--workout", workout["id"], "--format", "tcx", "--config", config],
                              capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0, f"keepalive export --workout: {exported.stderr[-1500:]}"
    with open(path) as f:
        page = activity(f.read())
    cli = activity(exported.stdout)
    assert (page["sport"], page["id"]) == (cli["sport"], cli["id"]), f"page {page['sport']} {page['id']}, CLI {cli['sport']} {cli['id']}"
    assert len(page["laps"]) == len(cli["laps"]), f"page {len(page['laps'])} laps, CLI {len(cli['laps'])}"
    for index, (mine, theirs) in enumerate(zip(page["laps"], cli["laps"])):
        for key in ("start", "time", "hr_avg", "hr_max", "trigger"):
            assert mine[key] == theirs[key], f"lap {index + 1} {key}: page {mine[key]}, CLI {theirs[key]}"
        # The record's distance_m is given to 0.1 m; the CLI writes the last lap from the unrounded one.
        assert abs(float(mine["distance"]) - float(theirs["distance"])) <= 0.05, f"lap {index + 1}: page {mine['distance']} m, CLI {theirs['distance']} m"
        assert mine["points"] == theirs["points"], (
            f"lap {index + 1}: {len(mine['points'])} trackpoints on the page, {len(theirs['points'])} from the CLI; first difference "
            f"{next(((a, b) for a, b in zip(mine['points'], theirs['points']) if a != b), None)}")
    points = sum(len(lap["points"]) for lap in page["laps"])
    print(f"page-check: TCX {os.path.basename(path)}: valid, {len(page['laps'])} laps and {points} trackpoints, "
          "the same as keepalive export --workout --format tcx")
