#!/bin/sh
# KeepAlive first-boot kit for Raspberry Pi OS bookworm. Runs once, as root, early at first boot
# (from Raspberry Pi Imager's firstrun.sh, or from cmdline.txt's systemd.run=; see README.md).
# It copies the kit into the root file system and installs a one-shot service that installs the
# .deb as soon as the network (for apt's dependencies) is up — retried on every boot until done.
set -eu
KIT=$(dirname "$(readlink -f "$0")")
ROOT=${KEEPALIVE_ROOT:-}          # tests point this at a scratch root
install -d -m 0755 "$ROOT/var/lib/keepalive-firstboot"
cp "$KIT"/*.deb "$ROOT/var/lib/keepalive-firstboot/" 2>/dev/null || true
[ -d "$KIT/deps" ] && cp "$KIT"/deps/*.deb "$ROOT/var/lib/keepalive-firstboot/" 2>/dev/null || true
install -d -m 0755 "$ROOT/etc/keepalive"
[ -f "$KIT/config.toml" ] && install -m 0644 "$KIT/config.toml" "$ROOT/etc/keepalive/config.toml"
# Secrets root's alone: the unit hands them to the agent as systemd credentials (LoadCredential=).
[ -f "$KIT/mqtt.password" ] && install -o root -g root -m 0600 "$KIT/mqtt.password" "$ROOT/etc/keepalive/mqtt.password"
[ -f "$KIT/mqtt.key" ] && install -o root -g root -m 0600 "$KIT/mqtt.key" "$ROOT/etc/keepalive/mqtt.key"
[ -f "$KIT/mqtt.crt" ] && install -m 0644 "$KIT/mqtt.crt" "$ROOT/etc/keepalive/mqtt.crt"
# The boot partition is FAT, readable by every user of the Pi (and by anyone holding the card):
# the secrets leave it once they are in place.
rm -f "$KIT/mqtt.password" "$KIT/mqtt.key"
[ -f "$KIT/gpsd.default" ] && install -D -m 0644 "$KIT/gpsd.default" "$ROOT/etc/default/gpsd"
install -D -m 0755 "$KIT/install-when-online.sh" "$ROOT/usr/local/sbin/keepalive-install-when-online"
install -D -m 0644 "$KIT/keepalive-firstboot.service" "$ROOT/etc/systemd/system/keepalive-firstboot.service"
install -d "$ROOT/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/keepalive-firstboot.service "$ROOT/etc/systemd/system/multi-user.target.wants/keepalive-firstboot.service"
# When started from cmdline.txt (no Imager customisation), take ourselves out of it again.
CMDLINE=$ROOT/boot/firmware/cmdline.txt
if [ -f "$CMDLINE" ]; then
    sed -i 's| systemd.run=[^ ]*keepalive/firstboot.sh||; s| systemd.run_success_action=reboot||; s| systemd.unit=kernel-command-line.target||' "$CMDLINE"
fi
exit 0
