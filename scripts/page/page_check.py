"""The day page in a real browser (issue 46's proof): headless Chromium driven by Selenium,
against a real mosquitto serving the built page, the agent, and a replayed past day with a walk
(scripts/page/day_rig.py). Asserts what a person would see, against the agent's own query reply:

- a wrong password shows its message; the right one opens the device;
- choosing yesterday on the date strip shows the reply's numbers (steps, distance, heart rate),
  the day's 5-minute points on the map, the timeline's buckets, the workout, and draws within 1 s
  (Performance API); the workout's GPX downloads and gpxpy reads it, its points within the walk;
  its TCX downloads, valid and the same as `keepalive export --workout` writes (tcx_check.py);
- over the shipped TLS listener, with a pinned certificate, the page logs in over wss:// and shows
  yesterday's numbers (tls_check.py);
- a day without data says so; a future date, an archive's not_found and a rate_limited reply show
  as messages;
- today's figures follow a new health/today without a reload;
- the page's account may not send commands (ACL); everything the page loads comes from the broker,
  within 500 KB transferred.

Screenshots and the measured figures go to --out (default .build/page-check/).
Usage: page_check.py --agent BIN [--out DIR]
"""
import argparse
import datetime
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse

import gpxpy
import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import day_rig
import tcx_check
import tls_check
from clients import DEVICE, Requester, browser
from day_rig import rig
from page_dom import choose, same, same_figures, text, value, wait
PARTS = ["health", "location", "track", "timeline", "workouts"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--out", default=os.path.join(day_rig.ROOT, ".build", "page-check"))
    parser.add_argument("--keep", action="store_true", help="keep the logs and store (printed)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    directory = tempfile.mkdtemp(prefix="page-check-")
    processes, clients, drivers = [], [], []
    try:
        run(args, directory, processes, clients, drivers)
        print("page-check: passed")
    except BaseException:
        for driver in drivers:
            driver.save_screenshot(os.path.join(args.out, "failure.png"))
            print("page-check: the browser's console:", *[e["message"] for e in driver.get_log("browser")], sep="\n  ")
            print("page-check: messages on the page:", text(driver, "#login-message"), text(driver, "#message"))
        for process in processes:
            print(f"page-check: {process.name}'s log ends:\n{process.log_tail(1500)}")
        raise
    finally:
        for driver in drivers:
            driver.quit()
        for client in clients:
            client.stop()
        for process in reversed(processes):
            process.stop()
        if args.keep:
            print(f"page-check: kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def run(args, directory, processes, clients, drivers):
    site = os.path.join(directory, "site")
    subprocess.run([os.path.join(day_rig.ROOT, "web", "build.sh"), site], check=True)
    password = secrets.token_urlsafe(12)
    broker, tcp, ws, wss, pin = day_rig.start_broker(directory, site, password)
    processes.append(broker)
    capture = rig.Capture(tcp, [f"keepalive/{DEVICE}/#"])
    clients.append(capture)

    zone = rig.midday_zone()
    offset = day_rig.zone_offset_hours(zone)
    now = datetime.datetime.now(datetime.timezone.utc)
    today_start = day_rig.local_midnight(now, offset)
    yesterday_start = today_start - datetime.timedelta(days=1)
    local = lambda instant: (instant + datetime.timedelta(hours=offset)).date().isoformat()  # noqa: E731
    today, yesterday = local(now), local(yesterday_start)
    walk_start = yesterday_start + datetime.timedelta(hours=14)

    points, walk_end = day_rig.walk_points(walk_start)
    track = os.path.join(directory, "walk.nmea")
    with open(track, "w") as f:
        f.write(day_rig.nmea(points))
    gps_port, hr_port = rig.free_port(), rig.free_port(day_rig.socket.SOCK_DGRAM)
    config = day_rig.write_agent_config(directory, DEVICE, zone, tcp, gps_port, hr_port)
    agent = rig.start_agent(args.agent, config, directory)
    processes.append(agent)
    rig.wait_until(lambda: capture.last(f"keepalive/{DEVICE}/status", lambda s: s.get("state") == "online"), 30,
                   f"the agent's status online\n{agent.log_tail()}")
    os.makedirs(os.path.join(directory, "gpsfake"), exist_ok=True)
    gps = rig.Process("gpsfake", ["gpsfake", "-P", str(gps_port), "-1", "-q", "-c", "0.005", "-W", "10", track],
                      directory, env={"TMPDIR": os.path.join(directory, "gpsfake")})
    processes.append(gps)
    day_rig.send_night(hr_port, datetime.date.fromisoformat(yesterday), offset)
    day_rig.send_heart_rate(hr_port, walk_start - datetime.timedelta(minutes=20))
    day_rig.send_foot_pod(hr_port, walk_start, 600, 110, 100000)
    day_rig.send_heart_rate(hr_port, now - datetime.timedelta(hours=1))
    rig.wait_until(lambda: capture.last(f"keepalive/{DEVICE}/event/workout", lambda e: e.get("op") == "finished"), 180,
                   f"the walk's workout to finish\n{agent.log_tail()}")

    requester = Requester(tcp)
    clients.append(requester)
    # The reference: the agent's reply, once the night is classified and two replies 2 s apart
    # agree (the backlog is stored). Reads only: asking again changes nothing; one request per 2 s
    # is what the agent's bucket refills (rate_per_s = 0.5), so the page's requests still get through.
    previous, reference = None, None
    for attempt in range(30):
        reference = requester.ask({"date": yesterday, "include": PARTS}, f"ref{attempt}")
        if reference == previous and (reference.get("health") or {}).get("sleep_s"):
            break
        previous = reference
        time.sleep(2)
    assert reference == previous, f"the agent's reply for yesterday kept changing, or has no night: {reference.get('health')}"
    assert reference["ok"] and reference["has_data"], reference
    assert reference["workouts"], f"no workout in yesterday's reply: {reference}"
    assert reference["track"], "no 5-minute track in yesterday's reply"
    shoes = requester.ask({"op": "add", "name": "Pegasus 41", "start_km": 120, "limit_km": 800}, "gear", topic="cmd/gear")
    assert shoes.get("ok"), shoes

    downloads = os.path.join(directory, "downloads")
    os.makedirs(downloads)
    tls_check.check(ws, wss, pin, password, reference, today, yesterday, downloads, drivers)
    driver = browser(downloads)
    drivers.append(driver)
    export = lambda workout: tcx_check.check(driver, downloads, workout, args.agent, config)  # noqa: E731
    check_page(driver, ws, password, reference, capture, requester, hr_port, args.out, downloads, today, yesterday, zone, export)
    check_acl(ws, password, capture, clients)
    # The device vanishes (SIGKILL): the broker publishes its will, and the page says so.
    agent.kill9()
    wait(driver, "var o = document.getElementById('offline'); return !o.hidden && /went offline/.test(o.textContent);",
         "the page to show the device offline (its will)", 30)
    print("page-check: after SIGKILL →", text(driver, "#offline"))


def answer_ms(driver):
    return driver.execute_script("return Number(document.body.dataset.answerMs);")


def check_page(driver, ws, password, reference, capture, requester, hr_port, out, downloads, today, yesterday, zone, export_tcx):
    # Tiles from a closed loopback port: nothing leaves the machine, and the page must say why the
    # map has no background.
    tiles = "http://127.0.0.1:9/{z}/{x}/{y}.png"
    driver.get(f"http://127.0.0.1:{ws}/?device={DEVICE}&tiles={urllib.parse.quote(tiles, safe='')}")
    wait(driver, "return document.body.dataset.ready === 'true';", "the page to load its scripts")

    # A wrong password: a clear message, the form stays.
    driver.find_element(By.ID, "user").send_keys(day_rig.PAGE_USER)
    driver.find_element(By.ID, "password").send_keys("not-the-password" + Keys.ENTER)
    wait(driver, "return /Wrong user name or password/.test(document.getElementById('login-message').textContent);",
         "the wrong-password message")
    # The refusal's reason code as session.js reads it off the WebSocket (for when mqtt.js drops it).
    code = driver.execute_script("return window.KeepAlivePage.session.refusal;")
    assert code == 135, f"the CONNACK reason code read off the WebSocket: {code}, mosquitto sends 135"
    print("page-check: wrong password →", text(driver, "#login-message"), f"(CONNACK {code})")

    field = driver.find_element(By.ID, "password")
    field.clear()
    field.send_keys(password + Keys.ENTER)
    wait(driver, f"return document.body.dataset.drawn === '{today}';", "today drawn after logging in", 20)
    assert zone in text(driver, "#device-line"), text(driver, "#device-line")
    wait(driver, f"return document.querySelector('#strip [data-date=\"{yesterday}\"]').classList.contains('has-data');",
         "yesterday marked as a day with data (its retained health/daily)", 20)

    # Yesterday, on the strip.
    drawn_ms = choose(driver, yesterday)
    waited_ms = answer_ms(driver)
    health = reference["health"]
    sleep = health["sleep"] or {}
    same_figures(driver, reference)
    assert health["sleep_s"] and sleep.get("person") == "given", f"yesterday's night: {health['sleep_s']} s, {sleep}"
    assert "with your age and sex" in text(driver, '#sleep [data-field="sleep_s"]'), text(driver, '#sleep [data-field="sleep_s"]')
    assert health["steps"], f"yesterday's steps: {health['steps']}"
    shown_steps = driver.find_element(By.CSS_SELECTOR, '#figures [data-field="steps"]').text
    assert f"{health['steps']:,}" in shown_steps, shown_steps
    points = driver.execute_script("return document.querySelectorAll('#map path.ka-point').length;")
    assert points == len(reference["track"]), f"map points {points}, reply track {len(reference['track'])}"
    buckets = driver.execute_script("return Chart.getChart('timeline').data.labels.length;")
    assert buckets == len(reference["timeline"]) and buckets in (92, 96, 100), f"timeline {buckets}, reply {len(reference['timeline'])}"
    steps_drawn = driver.execute_script("return Chart.getChart('timeline').data.datasets[0].data.reduce((a, b) => a + (b || 0), 0);")
    assert steps_drawn == health["steps"], f"timeline steps {steps_drawn}, day {health['steps']}"
    workouts = driver.find_elements(By.CSS_SELECTOR, "#workouts article.workout")
    assert len(workouts) == len(reference["workouts"]), f"{len(workouts)} workouts shown, {len(reference['workouts'])} in the reply"
    same(value_in(driver, "workout_distance_m"), reference["workouts"][0]["distance_m"], "workout distance")
    wait(driver, "return /could not be loaded/.test(document.getElementById('map-note').textContent);", "the map's no-tiles note")
    wait(driver, "return /Pegasus 41.*120.*800/.test(document.getElementById('shoes').textContent);", "the shoes with their km and limit")
    assert drawn_ms < 1000, f"yesterday drawn in {drawn_ms} ms"
    print(f"page-check: yesterday drawn in {drawn_ms} ms ({waited_ms} ms of it waiting for the answer); {points} map points, {buckets} buckets, {len(workouts)} workout(s)")
    driver.execute_script("window.scrollTo(0, 0);")
    driver.save_screenshot(os.path.join(out, "page-day.png"))

    # The workout's GPX, downloaded as a person would, read by gpxpy.
    workout = reference["workouts"][0]
    driver.find_element(By.CSS_SELECTOR, "#workouts button.gpx").click()
    gpx_path = rig.wait_until(lambda: next((os.path.join(downloads, f) for f in os.listdir(downloads) if f.endswith(".gpx")), None),
                              20, "the GPX download")
    with open(gpx_path) as f:
        gpx = gpxpy.parse(f)
    times = [p.time for t in gpx.tracks for s in t.segments for p in s.points]
    start = datetime.datetime.fromisoformat(workout["start"])
    end = datetime.datetime.fromisoformat(workout["end"])
    assert len(times) > 100, f"{len(times)} points in the GPX"
    assert all(start <= t <= end for t in times), f"GPX points outside {start}…{end}: {times[0]}…{times[-1]}"
    length = gpx.length_2d()
    print(f"page-check: GPX {os.path.basename(gpx_path)}: {len(times)} points, {length:.0f} m by gpxpy, workout {workout['distance_m']} m")
    export_tcx(workout)

    # A day without data, and a date that has not come yet where the device is.
    empty = (datetime.date.fromisoformat(today) - datetime.timedelta(days=20)).isoformat()
    choose(driver, empty, how="calendar")
    assert "No data was recorded" in text(driver, "#message"), text(driver, "#message")
    future = (datetime.date.fromisoformat(today) + datetime.timedelta(days=2)).isoformat()
    choose(driver, future, how="calendar")
    assert "has not come yet" in text(driver, "#message") and "future_date" in text(driver, "#message"), text(driver, "#message")
    print("page-check: future date →", text(driver, "#message"))

    # Today, live: a foot pod sends steps now; the page follows health/today without a reload.
    choose(driver, today)
    before = value(driver, "steps")
    seq_before = (capture.last(f"keepalive/{DEVICE}/health/today") or {}).get("seq", 0)
    now = datetime.datetime.now(datetime.timezone.utc)
    day_rig.send_foot_pod(hr_port, now - datetime.timedelta(seconds=120), 120, 170, 200000)
    fresh = rig.wait_until(lambda: capture.last(f"keepalive/{DEVICE}/health/today",
                                                lambda h: h.get("seq", 0) > seq_before and str(h.get("steps")) != before), 20,
                           "a health/today with new steps")
    wait(driver, f"return document.querySelector('#figures [data-field=\"steps\"]').dataset.value === '{fresh['steps']}';",
         f"today's steps on the page to become {fresh['steps']} (were {before})")
    print(f"page-check: today's steps followed health/today: {before} → {fresh['steps']}")
    driver.execute_script("window.scrollTo(0, 0);")
    driver.save_screenshot(os.path.join(out, "page-today.png"))

    # The fleet: an archive announces itself; it holds no record of yesterday (not_found), so the
    # device answers, and the page says so.
    capture.publish("keepalive/archive/status/page-check", json.dumps({"state": "online"}))
    wait(driver, "return window.KeepAlivePage.archive === true;", "the page to notice the archive")
    choose(driver, yesterday, how="key")
    label = driver.execute_script("return document.activeElement.getAttribute('aria-label');")
    assert label and "has data" in label and driver.execute_script("return document.activeElement.getAttribute('aria-selected');") == "true", label
    assert "holds no record of that day" in text(driver, "#answered-by"), text(driver, "#answered-by")
    same(value(driver, "steps"), health["steps"], "steps after the archive's not_found")
    print("page-check: archive →", text(driver, "#answered-by"))

    # rate_limited: a request every 20 ms (40 times the agent's refill) empties its bucket and keeps
    # it empty while the page asks. A burst of 25 and then the page did not: under load the burst
    # took longer than its refill, and a bucket once empty keeps a fraction of a token that the
    # next second can make whole. The page's request can still meet the one token refilled every
    # 2 s within 20 ms of it: then the page is asked for another day (a read; at most twice).
    stop = threading.Event()
    flooding = threading.Thread(target=requester.flood, args=({"date": today}, stop, 0.02))
    flooding.start()
    try:
        rig.wait_until(lambda: requester.refused, 20, "the agent to refuse one of the flood's requests (rate_limited)")
        for date in (empty, (datetime.date.fromisoformat(empty) - datetime.timedelta(days=1)).isoformat()):
            choose(driver, date, how="calendar")
            if "rate_limited" in text(driver, "#message"):
                break
    finally:
        stop.set()
        flooding.join()
    assert "rate_limited" in text(driver, "#message"), text(driver, "#message")
    print("page-check: rate limited →", text(driver, "#message"))

    budget = driver.execute_script("""
        var entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
        return entries.map(function (e) { return {name: e.name, transfer: e.transferSize, body: e.encodedBodySize}; });""")
    foreign = [e["name"] for e in budget if not e["name"].startswith(f"http://127.0.0.1:{ws}/") and "127.0.0.1:9/" not in e["name"]]
    assert not foreign, f"loaded from elsewhere: {foreign}"
    page_files = [e for e in budget if e["name"].startswith(f"http://127.0.0.1:{ws}/")]
    transferred = sum(e["transfer"] for e in page_files)
    assert transferred <= 500 * 1024, f"{transferred} bytes transferred"
    figures = {"drawn_ms": drawn_ms, "answer_ms": waited_ms, "transferred_bytes": transferred, "files": len(page_files),
               "bodies_bytes": sum(e["body"] for e in page_files)}
    with open(os.path.join(out, "figures.json"), "w") as f:
        json.dump(figures, f, indent=1)
    print(f"page-check: {len(page_files)} files, {transferred} bytes transferred")


def value_in(driver, field):
    return driver.execute_script("var e = document.querySelector('[data-field=\"' + arguments[0] + '\"]'); return e ? e.dataset.value : null;", field)


def check_acl(ws, password, capture, clients):
    """The page's account may ask, and read its replies, but not send a command. Both requests
    go out in order on one connection: the broker delivers the allowed second one, so had the
    command been let through it would have arrived first."""
    client = mqtt.Client(client_id=f"page-check-acl-{os.getpid()}", protocol=mqtt.MQTTv5, transport="websockets")
    client.username_pw_set(day_rig.PAGE_USER, password)
    replies = []
    client.on_message = lambda c, u, message: replies.append(message.payload.decode())
    acknowledged = []
    client.on_subscribe = lambda c, u, mid, *rest: acknowledged.append(mid)
    client.connect("127.0.0.1", ws)
    client.loop_start()
    try:
        mid = client.subscribe("reply/pagepi/page/acl-check", qos=0)[1]
        rig.wait_until(lambda: mid in acknowledged, 10, "the page account's subscription (SUBACK)")
        client.publish(f"keepalive/{DEVICE}/cmd/workout", json.dumps({"op": "start"}), qos=1).wait_for_publish(10)
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = "reply/pagepi/page/acl-check"
        props.CorrelationData = b"acl"
        client.publish(f"keepalive/{DEVICE}/selection/date", "2000-01-01", qos=1, properties=props).wait_for_publish(10)
        rig.wait_until(lambda: replies, 10, "the agent's reply to the page account's own request")
        rig.wait_until(lambda: any(m["topic"].endswith("/selection/date") and m["payload"] == "2000-01-01" for m in capture.snapshot()),
                       10, "the page account's request seen on the broker")
        commands = [m for m in capture.snapshot() if m["topic"].endswith("/cmd/workout")]
        assert not commands, f"the page's account sent a command: {commands}"
        print("page-check: the page account's command was refused; its request was answered:", replies[0][:80])
    finally:
        client.loop_stop()
        client.disconnect()


if __name__ == "__main__":
    main()
