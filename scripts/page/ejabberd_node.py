"""One ejabberd 23.01 node configured as the fleet's (deploy/fleet/ejabberd.yml.in: its accounts
and topic rules as shipped) plus what the page needs from a cluster node: an HTTP listener that
serves the page's files (mod_http_fileserver) and MQTT over WebSockets at /mqtt (mod_mqtt).
Started and stopped with ejabberdctl as deploy/fleet/cluster.sh does, on loopback only."""
import os
import re
import shutil
import subprocess
import time

from day_rig import ROOT, rig

HOST = "fleet.keepalive"
FLEET = os.path.join(ROOT, "deploy", "fleet")


class Node:
    def __init__(self, directory, site):
        self.dir = os.path.join(directory, "ej")
        os.makedirs(os.path.join(self.dir, "spool"))
        os.makedirs(os.path.join(self.dir, "logs"))
        self.mqtt, self.http = rig.free_port(), rig.free_port()
        with open(os.path.join(FLEET, "ejabberd.yml.in")) as f:
            config = f.read().replace("@HOST@", HOST).replace("@NODE_IP@", "127.0.0.1").replace("@MQTT_PORT@", str(self.mqtt))
        # Plain MQTT on loopback, as cluster.sh makes a node without FLEET_TLS_DIR; devices log in
        # with tokens signed with a key pair of this check's own (the node gets the public key).
        self.keys = os.path.join(directory, "jwt-keys")
        subprocess.run([os.path.join(FLEET, "fleet-jwt.py"), "keys", self.keys], check=True, capture_output=True)
        os.makedirs(os.path.join(self.dir, "jwt"))
        shutil.copy(os.path.join(self.keys, "jwt-public.jwk"), os.path.join(self.dir, "jwt", "jwt-public.jwk"))
        config = config.replace("@TLS@", "false").replace("@CERTFILES@", "")
        config = config.replace("@JWT_KEY@", os.path.join(self.dir, "jwt", "jwt-public.jwk"))
        unfilled = sorted({word for word in config.split("@")[1::2] if word.isupper()})
        assert not unfilled, f"deploy/fleet/ejabberd.yml.in has placeholders this check does not fill: {unfilled}"
        page_listener = f"""listen:
  -
    port: {self.http}
    ip: "127.0.0.1"
    module: ejabberd_http
    request_handlers:
      /mqtt: mod_mqtt
      /: mod_http_fileserver
"""
        assert config.count("\nlisten:\n") == 1 and config.count("\nmodules:\n") == 1, "deploy/fleet/ejabberd.yml.in changed shape"
        config = config.replace("\nlisten:\n", "\n" + page_listener, 1)
        config = config.replace("\nmodules:\n", f"\nmodules:\n  mod_http_fileserver:\n    docroot: \"{site}\"\n", 1)
        with open(os.path.join(self.dir, "ejabberd.yml"), "w") as f:
            f.write(config)
        with open(os.path.join(FLEET, "ejabberdctl.cfg.in")) as f:
            ctl = f.read().replace("@NODE_NAME@", f"pagecheck{self.mqtt}@localhost").replace("@NODE_IP@", "127.0.0.1")
            # One node alone: Erlang's default schedulers (cluster.sh gives each of its three one).
            ctl = ctl.replace("@DIR@", self.dir).replace("@ERL@", "/usr/bin/erl").replace("@SCHEDULERS@", "")
        left = re.findall(r"@[A-Z_]+@", ctl)
        assert not left, f"deploy/fleet/ejabberdctl.cfg.in has placeholders this check does not fill: {left}"
        with open(os.path.join(self.dir, "ejabberdctl.cfg"), "w") as f:
            f.write(ctl)
        shutil.copy("/etc/ejabberd/inetrc", os.path.join(self.dir, "inetrc"))
        # ejabberdctl runs the node as the ejabberd user: it must own its directory and read the page.
        subprocess.run(["chown", "-R", "ejabberd:ejabberd", self.dir], check=True)
        for path in (directory, site):
            os.chmod(path, 0o755)
        self.ctl("start")
        rig.wait_until(lambda: "is started" in self.ctl("status", check=False), 60, "ejabberd to start")
        # The revoked devices' group the topic rules consult, as cluster.sh up makes it (without it
        # ejabberd 23.01 fails every publish's check).
        self.ctl("srg_create", "revoked", HOST, "revoked", "Revoked devices", "")

    def ctl(self, *arguments, check=True):
        result = subprocess.run(
            ["ejabberdctl", "--config-dir", self.dir, "--ctl-config", os.path.join(self.dir, "ejabberdctl.cfg"),
             "--spool", os.path.join(self.dir, "spool"), "--logs", os.path.join(self.dir, "logs"), *arguments],
            capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"ejabberdctl {' '.join(arguments)}: {result.stdout}{result.stderr}")
        return result.stdout + result.stderr

    def register(self, user, password):
        """A reader's account (archive, viewer), stored as SCRAM."""
        self.ctl("register", user, HOST, password)

    def token(self, device):
        """A device's token (its MQTT password), valid a day."""
        return subprocess.run([os.path.join(FLEET, "fleet-jwt.py"), "token", self.keys, device, HOST, "1"],
                              check=True, capture_output=True, text=True).stdout.strip()

    def stop(self):
        try:
            with open(os.path.join(self.dir, "ejabberd.pid")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return
        self.ctl("stop", check=False)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.25)
        os.kill(pid, 9)

    def log_tail(self, size=2000):
        try:
            with open(os.path.join(self.dir, "logs", "ejabberd.log")) as f:
                return f.read()[-size:]
        except OSError:
            return ""
