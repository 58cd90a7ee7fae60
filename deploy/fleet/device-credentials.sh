#!/usr/bin/env bash
# Issues, renews and revokes a device's fleet credentials (docs/fleet.md, "Credentials"). A device's
# credential is a token (JWT, ES256) signed with FLEET_JWT_DIR/jwt-private.pem on the host that
# keeps it (fleet-jwt.py keys DIR); the nodes hold only the public key and no device account.
#
#   device-credentials.sh add DEVICE NODE1 NODE2 [OUT]   a token for DEVICE (valid FLEET_JWT_DAYS days,
#                                                         default 30); writes the Pi's bridge config
#                                                         (pi-bridge.conf.in filled in, the token as its
#                                                         remote_password) to OUT, default DEVICE-bridge.conf
#   device-credentials.sh renew DEVICE BRIDGE           a fresh token in that bridge file's remote_password
#                                                         (the rest kept); mosquitto reads it only at start:
#                                                         copy it to the Pi and restart mosquitto
#   device-credentials.sh revoke DEVICE                  puts DEVICE in the group "revoked": every node refuses
#                                                         its next publish or subscribe, also on a connection
#                                                         it holds, whatever token it holds
#   device-credentials.sh revoked                        the revoked devices
#   device-credentials.sh service archive|viewer         a reader's account (stored as SCRAM), its password to stdout
#   device-credentials.sh list                           the accounts (the readers: devices have none)
#
# NODE1/NODE2 are host:port of two cluster nodes. The device id ([device] id in the agent's
# config.toml) is the token's user: the topic rules let it publish only under keepalive/DEVICE/ and
# reply/DEVICE/, and read only its own query and command topics.
# add, revoke, revoked, service and list run ejabberdctl on a cluster node; FLEET_CTL replaces it,
# e.g. for the one-machine cluster
#   FLEET_CTL="deploy/fleet/cluster.sh ctl /tmp/fleet 1" FLEET_JWT_DIR=/tmp/fleet/jwt-keys device-credentials.sh add pi-anna …
#   FLEET_CAFILE=/etc/mosquitto/certs/keepalive-fleet-ca.pem device-credentials.sh add …   a TLS cluster:
#   the bridge verifies the nodes' certificate with that CA (the path as on the Pi)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HOST="${FLEET_HOST:-fleet.keepalive}"
read -r -a CTL <<<"${FLEET_CTL:-ejabberdctl}"
die() { echo "device-credentials.sh: $*" >&2; exit 1; }

token() {
  [ -n "${FLEET_JWT_DIR:-}" ] || die "FLEET_JWT_DIR: the directory with jwt-private.pem (fleet-jwt.py keys DIR)"
  "$here/fleet-jwt.py" token "$FLEET_JWT_DIR" "$1" "$HOST" "${FLEET_JWT_DAYS:-30}" || die "no token for $1"
}

# Names a topic level and an ejabberd account can both carry; "archive" and "viewer" are the
# fleet's own accounts.
valid_device() {
  [[ "$1" =~ ^[a-z0-9][a-z0-9_-]{0,62}$ ]] || die "device id \"$1\": lower-case letters, digits, - and _ (at most 63)"
  case "$1" in archive|viewer) die "\"$1\" is reserved for the fleet's own accounts";; esac
}

case "${1:-}" in
  add)
    device="${2:?add DEVICE NODE1 NODE2 [OUT]}"; node1="${3:?NODE1 (host:port)}"; node2="${4:?NODE2 (host:port)}"
    out="${5:-$device-bridge.conf}"
    valid_device "$device"
    # No account on the cluster: a signed token (the nodes hold only the public key) valid
    # FLEET_JWT_DAYS days; renew it before then.
    password="$(token "$device")"
    # Issued again after a revocation: no longer in the group "revoked".
    "${CTL[@]}" srg_user_del "$device" "$HOST" revoked "$HOST" >/dev/null 2>&1 || true
    umask 077
    sed -e "s|@DEVICE@|$device|g" -e "s|@PASSWORD@|$password|g" -e "s|@NODE1@|$node1|g" -e "s|@NODE2@|$node2|g" \
      "$here/pi-bridge.conf.in" >"$out"
    # A TLS cluster (FLEET_CAFILE: the fleet's ca.pem as the Pi will hold it): the bridge verifies
    # the node's certificate and its host name against NODE1/NODE2.
    if [ -n "${FLEET_CAFILE:-}" ]; then printf 'bridge_cafile %s\nbridge_insecure false\n' "$FLEET_CAFILE" >>"$out"; fi
    echo "$out"
    ;;
  renew)
    device="${2:?renew DEVICE BRIDGE}"; bridge="${3:?BRIDGE (the file add wrote)}"
    valid_device "$device"
    grep -q "^remote_username $device\$" "$bridge" || die "$bridge is not $device's bridge file"
    password="$(token "$device")"
    # Rewritten in place (mode and owner kept): a token holds only [A-Za-z0-9_.-].
    sed -i "s|^remote_password .*|remote_password $password|" "$bridge"
    echo "$bridge"
    ;;
  service)
    # The fleet's own accounts (archive, viewer): the password goes to stdout once.
    name="${2:?service archive|viewer}"
    case "$name" in archive|viewer) ;; *) die "service accounts are archive and viewer";; esac
    password="$(head -c 24 /dev/urandom | base64 | tr -d '/+=' | head -c 32)"
    "${CTL[@]}" register "$name" "$HOST" "$password" >/dev/null || die "could not register $name"
    echo "$password"
    ;;
  revoke)
    device="${2:?revoke DEVICE}"
    valid_device "$device"
    # ejabberd 23.01 has no deny list for tokens and cannot end one MQTT session: the topic rules
    # (ejabberd.yml.in, not_revoked) refuse every publish and subscribe of the group's members on
    # every node from the moment this returns (Mnesia, replicated; no reload). A token stays
    # valid for login until its exp, but the device can do nothing with it. Devices have no
    # account to remove.
    "${CTL[@]}" srg_list "$HOST" 2>/dev/null | grep -qx revoked \
      || "${CTL[@]}" srg_create revoked "$HOST" revoked "Revoked devices" "" >/dev/null || die "could not create the group revoked"
    "${CTL[@]}" srg_user_add "$device" "$HOST" revoked "$HOST" >/dev/null || die "could not revoke $device"
    echo "revoked $device (refused from its next publish on, on every node)"
    ;;
  revoked)
    "${CTL[@]}" srg_get_members revoked "$HOST" 2>/dev/null | sed 's/@.*//' || true
    ;;
  list)
    "${CTL[@]}" registered_users "$HOST"
    ;;
  *) die "usage: device-credentials.sh add|renew|revoke|revoked|service|list …" ;;
esac
