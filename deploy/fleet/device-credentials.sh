#!/usr/bin/env bash
# Issues and revokes a device's fleet credentials (docs/fleet.md, "Credentials").
#
#   device-credentials.sh add DEVICE NODE1 NODE2 [OUT]   account DEVICE with a fresh password; writes
#                                                         the Pi's bridge config (pi-bridge.conf.in
#                                                         filled in) to OUT, default DEVICE-bridge.conf
#   device-credentials.sh revoke DEVICE                  puts DEVICE in the group "revoked" (every node refuses
#                                                         its next publish or subscribe, also on a connection
#                                                         it holds, whatever its credential) and removes its
#                                                         account if it has one (its next login is refused)
#   device-credentials.sh list                           the accounts
#   device-credentials.sh revoked                        the revoked devices
#
# NODE1/NODE2 are host:port of two cluster nodes. The account name is the device id
# ([device] id in the agent's config.toml): the topic rules let it publish only under
# keepalive/DEVICE/ and reply/DEVICE/, and read only its own query and command topics.
# Runs ejabberdctl on a cluster node; FLEET_CTL replaces it, e.g. for the one-machine cluster
#   FLEET_CTL="deploy/fleet/cluster.sh ctl /tmp/fleet 1" device-credentials.sh add pi-anna …
#   FLEET_JWT_DIR=DIR device-credentials.sh add …   JWT authentication: a token signed with
#   DIR/jwt-private.pem (fleet-jwt.py keys DIR; FLEET_JWT_DAYS, default 30) instead of an account
#   FLEET_CAFILE=/etc/mosquitto/certs/keepalive-fleet-ca.pem device-credentials.sh add …   a TLS cluster:
#   the bridge verifies the nodes' certificate with that CA (the path as on the Pi)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HOST="${FLEET_HOST:-fleet.keepalive}"
read -r -a CTL <<<"${FLEET_CTL:-ejabberdctl}"
die() { echo "device-credentials.sh: $*" >&2; exit 1; }

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
    if [ -n "${FLEET_JWT_DIR:-}" ]; then
      # JWT authentication: no account on the cluster, a signed token (the nodes hold only the
      # public key) valid FLEET_JWT_DAYS days; reissue it before then.
      password="$("$here/fleet-jwt.py" token "$FLEET_JWT_DIR" "$device" "$HOST" "${FLEET_JWT_DAYS:-30}")" || die "no token for $device"
    else
      password="$(head -c 24 /dev/urandom | base64 | tr -d '/+=' | head -c 32)"
      "${CTL[@]}" register "$device" "$HOST" "$password" >/dev/null || die "could not register $device (already there? revoke it first)"
    fi
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
    # valid for login until its exp, but the device can do nothing with it.
    "${CTL[@]}" srg_list "$HOST" 2>/dev/null | grep -qx revoked \
      || "${CTL[@]}" srg_create revoked "$HOST" revoked "Revoked devices" "" >/dev/null || die "could not create the group revoked"
    "${CTL[@]}" srg_user_add "$device" "$HOST" revoked "$HOST" >/dev/null || die "could not revoke $device"
    if [ -z "${FLEET_JWT_DIR:-}" ]; then
      "${CTL[@]}" unregister "$device" "$HOST" >/dev/null || die "no account $device (revoked anyway)"
    fi
    echo "revoked $device (refused from its next publish on, on every node)"
    ;;
  revoked)
    "${CTL[@]}" srg_get_members revoked "$HOST" 2>/dev/null | sed 's/@.*//' || true
    ;;
  list)
    "${CTL[@]}" registered_users "$HOST"
    ;;
  *) die "usage: device-credentials.sh add|service|revoke|revoked|list …" ;;
esac
