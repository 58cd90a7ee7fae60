"""The check's own MQTT client and its browser (scripts/page/page_check.py)."""
import json
import os
import shutil

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from day_rig import rig

DEVICE = "pagepi"


class Requester:
    """An MQTT v5 client on the open listener: asks the agent as the page does, and answers as a
    stand-in archive would (docs/contract.md, "The fleet archive's queries")."""

    def __init__(self, port):
        self.replies = {}
        self.refused = False
        self.client = mqtt.Client(client_id=f"page-check-{os.getpid()}", protocol=mqtt.MQTTv5)
        self.client.on_message = self._received
        acknowledged = []
        self.client.on_subscribe = lambda c, u, mid, *rest: acknowledged.append(mid)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        mids = [self.client.subscribe(f, qos=0)[1] for f in ["reply/check/#", f"keepalive/archive/{DEVICE}/selection/date"]]
        rig.wait_until(lambda: all(m in acknowledged for m in mids), 10, "the check's subscriptions (SUBACK)")

    def _received(self, _client, _userdata, message):
        props = message.properties
        if message.topic.startswith("keepalive/archive/"):
            reply = Properties(PacketTypes.PUBLISH)
            reply.CorrelationData = props.CorrelationData
            reply.UserProperty = ("status", "404")
            body = {"ok": False, "error": {"code": "not_found", "message": "the archive holds no record of this day"}}
            self.client.publish(props.ResponseTopic, json.dumps(body), qos=0, properties=reply)
            return
        self.replies[props.CorrelationData.decode()] = message.payload.decode()
        if b'"rate_limited"' in message.payload:
            self.refused = True

    def ask(self, body, key, timeout=15, topic="selection/date"):
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = f"reply/check/{key}"
        props.CorrelationData = key.encode()
        self.client.publish(f"keepalive/{DEVICE}/{topic}", json.dumps(body), qos=0, properties=props)
        return json.loads(rig.wait_until(lambda: self.replies.get(key), timeout, f"the agent's reply to {key}"))

    def flood(self, body, stop, interval_s):
        """Asks every `interval_s` without waiting for the replies, until `stop` is set."""
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = "reply/check/flood"
        props.CorrelationData = b"flood"
        while not stop.wait(interval_s):
            self.client.publish(f"keepalive/{DEVICE}/selection/date", json.dumps(body), qos=0, properties=props)

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def browser(downloads, extra_flags=()):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1560",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-default-apps", "--disable-sync", "--disable-features=Translate,MediaRouter,OptimizationHints",
                 "--metrics-recording-only", "--no-pings", "--password-store=basic", *extra_flags]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option("prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
