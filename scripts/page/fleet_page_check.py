"""The day page pointed at a fleet node (issue 46, item 4): one ejabberd node configured as the
fleet's (scripts/page/ejabberd_node.py) serves the page and MQTT over WebSockets; the agent logs
in as its device account; the page logs in as the read-only `viewer`. Asserts: the page lists the
device from its retained status; today comes from the device, its figures equal the device's own
reply; with an archive online, yesterday's figures come from the archive and the rest from the
device, and the page says which answered; a wrong password shows its message.

The archive here is a stand-in on the `archive` account that answers as `keepalive archive` does
for a day it holds (the device's own reply to the default request, fetched from the device; not
PostgreSQL): what is checked is the page, the node's WebSockets and the fleet's topic rules.
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

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import day_rig
from clients import DEVICE, browser
from day_rig import rig
from ejabberd_node import HOST, Node


class StandInArchive:
    """Logged in as `archive`: answers keepalive/archive/<device>/selection/date with the device's
    own reply to the same date (asked on reply/<device>/archive/…, as the fleet's rules want)."""

    def __init__(self, port, password):
        self.pending = {}
        self.client = mqtt.Client(client_id="archive-standin", protocol=mqtt.MQTTv5)
        self.client.username_pw_set("archive", password)
        self.client.on_message = self._received
        acknowledged = []
        self.client.on_subscribe = lambda c, u, mid, *rest: acknowledged.append(mid)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        mids = [self.client.subscribe(f, qos=0)[1] for f in [f"keepalive/archive/{DEVICE}/selection/date", "reply/+/archive/#"]]
        rig.wait_until(lambda: all(m in acknowledged for m in mids), 10, "the archive's subscriptions")
        self.client.publish("keepalive/archive/status/standin", json.dumps({"state": "online"}), qos=1, retain=True)
        self.answered = []

    def _received(self, _client, _userdata, message):
        props = message.properties
        if message.topic.startswith("keepalive/archive/"):
            key = secrets.token_hex(4)
            self.pending[key] = (props.ResponseTopic, props.CorrelationData)
            ask = Properties(PacketTypes.PUBLISH)
            ask.ResponseTopic = f"reply/{DEVICE}/archive/{key}"
            ask.CorrelationData = key.encode()
            date = json.loads(message.payload)["date"]
            self.client.publish(f"keepalive/{DEVICE}/selection/date", json.dumps({"date": date}), qos=0, properties=ask)
            return
        topic, correlation = self.pending.pop(props.CorrelationData.decode(), (None, None))
        if topic:
            reply = Properties(PacketTypes.PUBLISH)
            reply.CorrelationData = correlation
            reply.UserProperty = ("status", "200")
            self.client.publish(topic, message.payload, qos=0, properties=reply)
            self.answered.append(json.loads(message.payload))

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="page-fleet-")
    node, stoppers, drivers = None, [], []
    try:
        site = os.path.join(directory, "site")
        subprocess.run([os.path.join(day_rig.ROOT, "web", "build.sh"), site], check=True)
        node = Node(directory, site)
        passwords = {user: secrets.token_urlsafe(12) for user in [DEVICE, "viewer", "archive"]}
        for user, password in passwords.items():
            node.register(user, password)
        password_file = os.path.join(directory, "device.password")
        with open(password_file, "w") as f:
            f.write(passwords[DEVICE] + "\n")
        os.chmod(password_file, 0o600)

        zone = rig.midday_zone()
        offset = day_rig.zone_offset_hours(zone)
        now = datetime.datetime.now(datetime.timezone.utc)
        local = lambda instant: (instant + datetime.timedelta(hours=offset)).date().isoformat()  # noqa: E731
        today, yesterday = local(now), local(now - datetime.timedelta(days=1))
        hr_port = rig.free_port(day_rig.socket.SOCK_DGRAM)
        config = day_rig.write_agent_config(directory, DEVICE, zone, node.mqtt, rig.free_port(), hr_port)
        with open(config) as f:
            text = f.read().replace("[mqtt]\n", f"[mqtt]\nusername = \"{DEVICE}\"\npassword_file = \"{password_file}\"\n", 1)
            text = text.replace("[gps]\n", "[gps]\nenabled = false\n", 1)
        with open(config, "w") as f:
            f.write(text)
        agent = rig.start_agent(args.agent, config, directory)
        stoppers.append(agent.stop)
        day_rig.send_heart_rate(hr_port, now - datetime.timedelta(hours=26))
        day_rig.send_heart_rate(hr_port, now - datetime.timedelta(hours=1))

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
        field = driver.find_element(By.ID, "password")
        field.clear()
        field.send_keys(passwords["viewer"] + Keys.ENTER)
        rig.wait_until(lambda: driver.execute_script(f"return document.body.dataset.drawn === '{today}';"), 60,
                       f"today drawn from the device through the node\n{agent.log_tail()}\n{node.log_tail()}")
        by = driver.find_element(By.ID, "answered-by").text
        assert "the device" in by or "live" in by, by
        print("fleet-page-check: today →", by, "|", driver.execute_script(
            "return document.querySelector('#figures [data-field=\"hr_avg\"]').dataset.value;"), "bpm avg")

        archive = StandInArchive(node.mqtt, passwords["archive"])
        stoppers.append(archive.stop)
        rig.wait_until(lambda: driver.execute_script("return window.KeepAlivePage.archive === true;"), 15, "the page to see the archive")
        driver.execute_script("delete document.body.dataset.drawn;")
        driver.find_element(By.CSS_SELECTOR, f'#strip [data-date="{yesterday}"]').click()
        rig.wait_until(lambda: driver.execute_script(f"return document.body.dataset.drawn === '{yesterday}';"), 30,
                       f"yesterday drawn\n{driver.find_element(By.ID, 'message').text}")
        by = driver.find_element(By.ID, "answered-by").text
        assert "the archive (figures)" in by, by
        assert archive.answered, "the archive answered nothing"
        held = archive.answered[-1]["health"]["heart_rate"]["avg"]
        shown = driver.execute_script("return document.querySelector('#figures [data-field=\"hr_avg\"]').dataset.value;")
        assert abs(float(shown) - held) < 1e-9, f"page {shown}, archive {held}"
        print("fleet-page-check: yesterday →", by, f"| {shown} bpm avg, as the archive answered")
        print("fleet-page-check: passed")
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
        if node:
            node.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
