#!/usr/bin/env bash
# A three-node ejabberd MQTT 5 cluster on this machine, for trials and tests (docs/fleet.md).
#
#   deploy/fleet/cluster.sh up DIR PORT     three nodes in DIR, MQTT on 127.0.0.1:PORT, PORT+1, PORT+2
#   deploy/fleet/cluster.sh down DIR        stops every node of DIR (by PID), and its epmd if it started one
#   deploy/fleet/cluster.sh stop DIR N      stops node N (1-3) cleanly
#   deploy/fleet/cluster.sh start DIR N     starts node N again (it rejoins by itself: Mnesia remembers)
#   deploy/fleet/cluster.sh pid DIR N       the PID of node N's Erlang VM (kill -9 it to test a node dying)
#   deploy/fleet/cluster.sh ctl DIR N ARGS  ejabberdctl ARGS on node N (e.g. register, list_cluster)
#
# ejabberd runs as the user ejabberd (run this as root); the Debian service is never used.
# Devices log in only with a token (deploy/fleet/fleet-jwt.py token), checked against
# FLEET_JWT_DIR/jwt-public.jwk (fleet-jwt.py keys DIR makes it); without FLEET_JWT_DIR, `up` makes a
# key pair in DIR/jwt-keys (a trial: the private key then sits beside the nodes). The nodes store no
# device secret; the readers' accounts (archive, viewer) are stored as SCRAM.
# FLEET_SCHEDULERS: the nodes' Erlang scheduler flags (default "+S 1:1", one each: three nodes share
# this machine's cores; "" for Erlang's one per core).
# FLEET_REVOKED_RULE=0: the topic rules do not consult the group "revoked" (only to measure its cost).
# FLEET_TLS_DIR=DIR (made by deploy/fleet/fleet-ca.sh DIR localhost …): the nodes speak MQTT over
# TLS only, with DIR/node.pem; clients verify it with DIR/ca.pem and connect to "localhost". The
# nodes' Erlang distribution (and ejabberdctl's) then runs over TLS too (-proto_dist inet_tls), each
# side presenting node.pem and verifying the other's with ca.pem; FLEET_DIST_TLS=0 keeps the
# distribution plain (a private network between hosts, docs/fleet.md; to measure what TLS costs there).
# Nodes start one at a time: a node must be up before the next joins.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
HOST="${FLEET_HOST:-fleet.keepalive}"
NODE_IP="${FLEET_NODE_IP:-127.0.0.1}"

die() { echo "cluster.sh: $*" >&2; exit 1; }
[ "$#" -ge 2 ] || die "usage: cluster.sh up|down|stop|start|pid|ctl DIR [PORT|N] …"
command -v ejabberdctl >/dev/null || die "ejabberd is not installed (apt-get install --no-install-recommends ejabberd)"
cmd="$1"; dir="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2

node_dir() { echo "$dir/ej$1"; }
node_name() { echo "ej$1_$(cat "$dir/port")@localhost"; }
ctl() {
  local n="$1"; shift
  local d; d="$(node_dir "$n")"
  ejabberdctl --config-dir "$d" --ctl-config "$d/ejabberdctl.cfg" --spool "$d/spool" --logs "$d/logs" "$@"
}
node_pid() { cat "$(node_dir "$1")/ejabberd.pid" 2>/dev/null || true; }

# Waits until node N answers `status` with "started" (at most 60 s).
wait_started() {
  local n="$1"
  for _ in $(seq 1 120); do
    if ctl "$n" status 2>/dev/null | grep -q "is started"; then return 0; fi
    sleep 0.5
  done
  tail -20 "$(node_dir "$n")/logs/ejabberd.log" >&2 || true
  die "node $n did not start within 60 s"
}

start_node() {
  local n="$1"
  ctl "$n" start
  wait_started "$n"
}

case "$cmd" in
  up)
    port="${1:?cluster.sh up DIR PORT}"
    echo "$port" >"$dir/port"
    tls=false; certfiles=""; dist=""
    if [ -n "${FLEET_TLS_DIR:-}" ]; then
      [ -f "$FLEET_TLS_DIR/node.pem" ] || die "no $FLEET_TLS_DIR/node.pem (deploy/fleet/fleet-ca.sh makes it)"
      mkdir -p "$dir/tls"; cp "$FLEET_TLS_DIR/node.pem" "$dir/tls/node.pem"; chmod 600 "$dir/tls/node.pem"
      tls=true; certfiles="\"$dir/tls/node.pem\""
      cp "$FLEET_TLS_DIR/ca.pem" "$dir/tls/ca.pem"
      # Distribution over TLS, mutually verified: a node (or control node) without a certificate
      # from the fleet's CA cannot join, and nothing between the nodes travels in clear.
      printf '%s\n' \
        "[{server, [{certfile, \"$dir/tls/node.pem\"}, {cacertfile, \"$dir/tls/ca.pem\"}, {verify, verify_peer}," \
        "           {fail_if_no_peer_cert, true}, {secure_renegotiate, true}]}," \
        " {client, [{certfile, \"$dir/tls/node.pem\"}, {cacertfile, \"$dir/tls/ca.pem\"}, {verify, verify_peer}," \
        "           {secure_renegotiate, true}]}]." >"$dir/tls/ssl_dist.conf"
      if [ "${FLEET_DIST_TLS:-1}" != 0 ]; then dist=" -proto_dist inet_tls -ssl_dist_optfile $dir/tls/ssl_dist.conf"; fi
    fi
    keys="${FLEET_JWT_DIR:-$dir/jwt-keys}"
    if [ -z "${FLEET_JWT_DIR:-}" ] && [ ! -f "$keys/jwt-public.jwk" ]; then "$here/fleet-jwt.py" keys "$keys" >/dev/null; fi
    [ -f "$keys/jwt-public.jwk" ] || die "no $keys/jwt-public.jwk (deploy/fleet/fleet-jwt.py keys makes it)"
    # Only the public key goes to the nodes.
    mkdir -p "$dir/jwt"; cp "$keys/jwt-public.jwk" "$dir/jwt/"
    revoked_rule=""
    if [ "${FLEET_REVOKED_RULE:-1}" = 0 ]; then revoked_rule='s|: not_revoked$|: all|'; fi
    for n in 1 2 3; do
      d="$(node_dir "$n")"
      mkdir -p "$d/spool" "$d/logs"
      sed -e "s|@HOST@|$HOST|g" -e "s|@NODE_IP@|$NODE_IP|g" -e "s|@MQTT_PORT@|$((port + n - 1))|g" \
        -e "s|@TLS@|$tls|g" -e "s|@CERTFILES@|$certfiles|g" -e "s|@JWT_KEY@|$dir/jwt/jwt-public.jwk|g" -e "${revoked_rule:-s|^||}" \
        "$here/ejabberd.yml.in" >"$d/ejabberd.yml"
      sed -e "s|@NODE_NAME@|$(node_name "$n")|g" -e "s|@NODE_IP@|$NODE_IP|g" -e "s|@DIR@|$d|g" -e "s|@ERL@|$dir/erl|g" -e "s|@SCHEDULERS@|${FLEET_SCHEDULERS-+S 1:1}|g" \
        -e "s|^\(ERL_OPTIONS=\".*\)\"$|\1$dist\"|" \
        "$here/ejabberdctl.cfg.in" >"$d/ejabberdctl.cfg"
      cp /etc/ejabberd/inetrc "$d/inetrc"
    done
    # ejabberdctl starts the node through su, which leaves the soft limit of 1024 descriptors:
    # about 1000 MQTT connections, after which sessions fail ("Internal server error") and a
    # restarting node cannot open its own code. ejabberdctl.cfg points ERL at this wrapper, which
    # raises it to the hard limit first (Debian's ejabberd.service sets LimitNOFILE=65536).
    printf '#!/bin/sh\nulimit -n "$(ulimit -Hn)" 2>/dev/null\nexec /usr/bin/erl "$@"\n' >"$dir/erl"
    chmod 755 "$dir/erl"
    chown -R ejabberd:ejabberd "$dir"
    # Whether an epmd was already there: `down` stops only one this cluster started.
    # (asked, not looked up with pgrep: an epmd that exited lingers as a zombie of init here)
    if ! ERL_EPMD_ADDRESS="$NODE_IP" epmd -names >/dev/null 2>&1; then echo yes >"$dir/started-epmd"; fi
    start_node 1
    for n in 2 3; do
      start_node "$n"
      ctl "$n" join_cluster "$(node_name 1)" >/dev/null
      wait_started "$n"
    done
    # The (empty) group of revoked devices, which the topic rules consult on every publish and
    # subscribe: ejabberd 23.01 fails the session's check if the group does not exist.
    ctl 1 srg_create revoked "$HOST" revoked "Revoked devices" "" >/dev/null
    ctl 1 list_cluster
    ;;
  down)
    for n in 3 2 1; do
      pid="$(node_pid "$n")"
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        ctl "$n" stop >/dev/null 2>&1 || true
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -9 "$pid" 2>/dev/null || true
      fi
    done
    # The epmd the first node started, once no Erlang node is registered with it (epmd -kill
    # refuses otherwise); it outlives a SIGTERM for a while, so it is asked, not signalled.
    if [ -f "$dir/started-epmd" ]; then
      for _ in $(seq 1 20); do
        ERL_EPMD_ADDRESS="$NODE_IP" epmd -names 2>/dev/null | grep -q "^name " || break
        sleep 0.25
      done
      ERL_EPMD_ADDRESS="$NODE_IP" epmd -kill >/dev/null 2>&1 || true
    fi
    ;;
  stop) ctl "$1" stop ;;
  start) start_node "$1" ;;
  pid) node_pid "$1" ;;
  ctl) n="$1"; shift; ctl "$n" "$@" ;;
  *) die "unknown command $cmd" ;;
esac
