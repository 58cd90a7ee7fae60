"""The day page pointed at a fleet node (issue 46, item 4): one ejabberd node configured as the
fleet's (scripts/page/ejabberd_node.py) serves the page and MQTT over WebSockets; the agent logs
in with its device token; the real `keepalive archive` logs in as `archive`, with a PostgreSQL of
its own (scripts/page/postgres.py), as the fleet tests run them; the page logs in as the read-only
`viewer`. Asserts:

- a wrong password shows its message; the page lists the device from its retained status;
- today comes from the device;
- yesterday, once the archive holds it (its row in archive_days, fetched from the device when the
  device's health/daily/<yesterday> arrived): the figures from the archive, equal to the archive's
  own answer, and the map, timeline and workouts from the device; the page says which answered;
- a day the archive does not hold: the archive's not_found, the device answers, the page says so;
- the device switched off: yesterday's figures still come from the archive, and the page says
  the device did not answer.
Usage: fleet_page_check.py --agent BIN
"""
import argparse
import datetime
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import day_rig
from clients import DEVICE, browser
from day_rig import rig
from ejabberd_node import FLEET, HOST, Node
from postgres import Postgres


def start_archive(agent, directory, port, password, conninfo):
    """`keepalive archive` as the fleet tests run it: deploy/fleet/archive.toml.in filled in."""
    password_file = os.path.join(directory, "archive.password")
    with open(password_file, "w") as f:
        f.write(password + "\n")
    os.chmod(password_file, 0o600)
    values = {"HOST": "127.0.0.1", "PORT": str(port), "TLS": "false", "CAFILE": "", "PASSWORD_FILE": password_file,
              "CLIENT_ID": "archive-page", "CONNINFO": conninfo, "STATUS_INTERVAL_S": "1", "NODES": ""}
    with open(os.path.join(FLEET, "archive.toml.in")) as f:
        text = f.read()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    assert "@" not in text, "deploy/fleet/archive.toml.in has a placeholder this check does not fill"
    config = os.path.join(directory, "archive.toml")
    with open(config, "w") as f:
        f.write(text)
    process = rig.Process("archive", [agent, "archive", "--config", config], directory)
    rig.wait_until(lambda: "MQTT connected" in process.log_tail(20000), 30, "the archive to connect")
    return process


class Viewer:
    """The check's own MQTT client as `viewer`: asks as the page does, to compare with the page."""

    def __init__(self, port, password):
        self.replies = {}
        self.client = mqtt.Client(client_id="viewer-check", protocol=mqtt.MQTTv5)
        self.client.username_pw_set("viewer", password)
        self.client.on_message = lambda c, u, m: self.replies.__setitem__(m.properties.CorrelationData.decode(), m.payload.decode())
        acknowledged = []
        self.client.on_subscribe = lambda c, u, mid, *rest: acknowledged.append(mid)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        mid = self.client.subscribe("reply/+/viewer/check", qos=0)[1]
        rig.wait_until(lambda: mid in acknowledged, 10, "the viewer's subscription")

    def ask(self, topic, body, answerer, key):
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = f"reply/{answerer}/viewer/check"
        props.CorrelationData = key.encode()
        self.client.publish(topic, json.dumps(body), qos=0, properties=props)
        return json.loads(rig.wait_until(lambda: self.replies.get(key), 15, f"the answer to {key} on {topic}"))

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="page-fleet-")
    node, postgres, stoppers, drivers = None, None, [], []
    began = time.monotonic()
    try:
        site = os.path.join(directory, "site")
        subprocess.run([os.path.join(day_rig.ROOT, "web", "build.sh"), site], check=True)
        node = Node(directory, site)
        passwords = {user: secrets.token_urlsafe(12) for user in ["viewer", "archive"]}
        for user, password in passwords.items():
            node.register(user, password)
        passwords[DEVICE] = node.token(DEVICE)
        postgres = Postgres(directory, rig.free_port())
        archive = start_archive(args.agent, directory, node.mqtt, passwords["archive"], postgres.conninfo)
        stoppers.append(archive.stop)
        print(f"fleet-page-check: node, PostgreSQL and the archive up in {time.monotonic() - began:.1f} s")

        password_file = os.path.join(directory, "device.password")
        with open(password_file, "w") as f:
            f.write(passwords[DEVICE] + "\n")
        os.chmod(password_file, 0o600)
        zone = rig.midday_zone()
        offset = day_rig.zone_offset_hours(zone)
        now = datetime.datetime.now(datetime.timezone.utc)
        local = lambda instant: (instant + datetime.timedelta(hours=offset)).date().isoformat()  # noqa: E731
        today, yesterday = local(now), local(now - datetime.timedelta(days=1))
        unheld = local(now - datetime.timedelta(days=5))
        hr_port = rig.free_port(day_rig.socket.SOCK_DGRAM)
        config = day_rig.write_agent_config(directory, DEVICE, zone, node.mqtt, rig.free_port(), hr_port)
        with open(config) as f:
            text = f.read().replace("[mqtt]\n", f"[mqtt]\nusername = \"{DEVICE}\"\npassword_file = \"{password_file}\"\n", 1)
            text = text.replace("[gps]\n", "[gps]\nenabled = false\n", 1)
            # A late day's health/daily at once (as the fleet's day test does), not after 5 minutes.
            text = text.replace("[schedule]\n", "[schedule]\ndaily_grace_s = 0\n", 1)
        with open(config, "w") as f:
            f.write(text)
        agent = rig.start_agent(args.agent, config, directory)
        stoppers.append(agent.stop)
        day_rig.send_heart_rate(hr_port, now - datetime.timedelta(hours=26))
        day_rig.send_heart_rate(hr_port, now - datetime.timedelta(hours=1))
        # The archive asks the device for yesterday when its health/daily arrives, and keeps the reply.
        rig.wait_until(lambda: postgres.query(f"SELECT count(*) FROM archive_days WHERE device = '{DEVICE}' AND day = '{yesterday}'")
                       == [["1"]], 180, f"the archive to hold {yesterday}\n{archive.log_tail()}\n{agent.log_tail()}")
        viewer = Viewer(node.mqtt, passwords["viewer"])
        stoppers.append(viewer.stop)
        held = viewer.ask(f"keepalive/archive/{DEVICE}/selection/date", {"date": yesterday}, "archive", "held")
        assert held.get("ok") and held["health"]["heart_rate"], f"the archive's answer for {yesterday}: {held}"
        print(f"fleet-page-check: the archive holds {yesterday} ({time.monotonic() - began:.1f} s in)")

        # ejabberd picks the virtual host by the HTTP Host header, for the files and for the MQTT
        # session's accounts alike: the page is opened by the fleet's host name (here mapped to
        # loopback in the browser, as DNS would on a real fleet).
        driver = browser(os.path.join(directory, "downloads"), [f"--host-resolver-rules=MAP {HOST} 127.0.0.1"])
        drivers.append(driver)
        origin = f"http://{HOST}:{node.http}"
        broker = f"ws://{HOST}:{node.http}/mqtt"
        driver.get(f"{origin}/index.html?device={DEVICE}&broker={broker}&tiles=http%3A%2F%2F127.0.0.1%3A9%2F%7Bz%7D%2F%7Bx%7D%2F%7By%7D.png")
        rig.wait_until(lambda: driver.execute_script("return document.body.dataset.ready === 'true';"), 20, "the page from the node")
        driver.find_element(By.ID, "user").send_keys("viewer")
        driver.find_element(By.ID, "password").send_keys("wrong" + Keys.ENTER)
        rig.wait_until(lambda: "Wrong user name or password" in driver.find_element(By.ID, "login-message").text, 15,
                       "the wrong-password message from ejabberd")
        print("fleet-page-check: wrong password →", driver.find_element(By.ID, "login-message").text,
              f"(CONNACK {driver.execute_script('return window.KeepAlivePage.session.refusal;')})")
        field = driver.find_element(By.ID, "password")
        field.clear()
        field.send_keys(passwords["viewer"] + Keys.ENTER)
        rig.wait_until(lambda: driver.execute_script(f"return document.body.dataset.drawn === '{today}';"), 60,
                       f"today drawn from the device through the node\n{agent.log_tail()}\n{node.log_tail()}")
        by = driver.find_element(By.ID, "answered-by").text
        assert "the device" in by, by
        print("fleet-page-check: today →", by)
        rig.wait_until(lambda: driver.execute_script("return window.KeepAlivePage.archive === true;"), 15,
                       "the page to see the archive (its retained keepalive/archive/status/<client id>)")

        shown = lambda field: driver.execute_script(  # noqa: E731
            "var e = document.querySelector('#figures [data-field=\"' + arguments[0] + '\"]'); return e ? e.dataset.value : null;", field)
        by = choose(driver, yesterday)
        assert "the archive (figures) and the device (map, timeline, workouts)" in by, by
        device = viewer.ask(f"keepalive/{DEVICE}/selection/date", {"date": yesterday}, DEVICE, "device")
        assert held["health"] == device["health"], "the archive's figures differ from the device's own"
        for field, expected in [("hr_avg", held["health"]["heart_rate"]["avg"]), ("hr_max", held["health"]["heart_rate"]["max"]),
                                ("hr_min", held["health"]["heart_rate"]["min"])]:
            assert abs(float(shown(field)) - expected) < 1e-9, f"{field}: page {shown(field)}, archive {expected}"
        buckets = driver.execute_script("return Chart.getChart('timeline').data.labels.length;")
        assert buckets in (92, 96, 100), f"the device's timeline: {buckets} buckets"
        print(f"fleet-page-check: yesterday → {by} | {shown('hr_avg')} bpm avg as the archive answered, {buckets} buckets from the device")

        by = choose(driver, unheld, how="calendar")
        assert "the device (" in by and "not_found" in by, by
        assert "No data was recorded" in driver.find_element(By.ID, "message").text, driver.find_element(By.ID, "message").text
        print(f"fleet-page-check: {unheld}, not held → {by}")

        # The Pi switched off: the archive still answers for the day; the device's parts time out.
        agent.stop()
        by = choose(driver, yesterday, timeout=30)
        assert by.startswith("Answered by the archive (the device did not answer"), by
        assert abs(float(shown("hr_avg")) - held["health"]["heart_rate"]["avg"]) < 1e-9, shown("hr_avg")
        print(f"fleet-page-check: device switched off, yesterday → {by}")
        print(f"fleet-page-check: passed in {time.monotonic() - began:.0f} s")
    except BaseException:
        if node:
            print("fleet-page-check: ejabberd's log ends:\n" + node.log_tail())
        for driver in drivers:
            print("fleet-page-check: the browser's console:", *[e["message"] for e in driver.get_log("browser")][-15:], sep="\n  ")
        raise
    finally:
        for driver in drivers:
            driver.quit()
        for stop in reversed(stoppers):
            stop()
        if postgres:
            postgres.stop()
        if node:
            node.stop()
        shutil.rmtree(directory, ignore_errors=True)


def choose(driver, date, how="strip", timeout=20):
    """Chooses `date` on the strip (or the calendar), waits until it is drawn, returns who answered."""
    driver.execute_script("delete document.body.dataset.drawn;")
    if how == "strip":
        driver.find_element(By.CSS_SELECTOR, f'#strip [data-date="{date}"]').click()
    else:
        driver.execute_script("var c = document.getElementById('calendar'); c.value = arguments[0];"
                              "c.dispatchEvent(new Event('change'));", date)
    rig.wait_until(lambda: driver.execute_script(f"return document.body.dataset.drawn === '{date}';"), timeout,
                   f"{date} drawn ({driver.find_element(By.ID, 'message').text})")
    return driver.find_element(By.ID, "answered-by").text


if __name__ == "__main__":
    main()
