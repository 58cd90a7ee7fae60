#!/bin/sh
# Installs the KeepAlive .deb (and any dependency .debs shipped with it) with apt, then
# disables itself. Exit non-zero (to be retried at the next boot) while apt cannot finish.
set -eu
DIR=/var/lib/keepalive-firstboot
cd "$DIR"
# Keep a config the owner put in place: the package's conffile prompt is answered "keep".
apt-get update -qq || true
apt-get install -y -o Dpkg::Options::=--force-confold ./*.deb
systemctl enable --now gpsd.socket 2>/dev/null || true
systemctl enable --now keepalive.service
systemctl disable keepalive-firstboot.service
rm -rf "$DIR"
