#!/usr/bin/env bash
# The fleet's own certificate authority and the nodes' certificate, with openssl (docs/fleet.md, "TLS").
#
#   deploy/fleet/fleet-ca.sh DIR NAME…    DIR/ca.pem (+ ca.key, kept off the nodes) and DIR/node.pem
#                                          (key, certificate and the CA's certificate, for ejabberd's
#                                          certfiles) valid for every NAME (host names; IPv4
#                                          addresses as IP entries)
#   FLEET_CERT=postgres deploy/fleet/fleet-ca.sh DIR NAME…
#                                          the same CA, DIR/postgres.crt and postgres.key (separate
#                                          files, as PostgreSQL's ssl_cert_file/ssl_key_file take them;
#                                          also postgres.pem) for the database host
#
# The CA is made once (10 years) and reused; node.pem is made anew on every call (825 days): run
# it again to renew, copy node.pem to the nodes and restart them one at a time. ca.pem goes to the
# Pis (bridge_cafile), the archivers and the viewer ([mqtt] cafile).
set -euo pipefail
dir="${1:?fleet-ca.sh DIR NAME…}"; shift
cert="${FLEET_CERT:-node}"
[[ "$cert" =~ ^[a-z0-9-]+$ ]] || { echo "fleet-ca.sh: FLEET_CERT is a file name: letters, digits, -" >&2; exit 1; }
[ "$cert" != ca ] || { echo "fleet-ca.sh: FLEET_CERT=ca would overwrite the CA" >&2; exit 1; }
[ "$#" -ge 1 ] || { echo "fleet-ca.sh: name at least one host the nodes are reached by" >&2; exit 1; }
mkdir -p "$dir"; umask 077
if [ ! -f "$dir/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=KeepAlive fleet CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi
san=""
for name in "$@"; do
  if [[ "$name" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]]; then san+="${san:+,}IP:$name"; else san+="${san:+,}DNS:$name"; fi
done
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
  -keyout "$dir/$cert.key" -out "$dir/$cert.csr" 2>/dev/null
openssl x509 -req -in "$dir/$cert.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
  -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san") -out "$dir/$cert.crt" 2>/dev/null
# The chain is in the file: without it OpenSSL 3.0 builds it at every handshake, looking the
# issuer up in the system's store, which reads /etc/ssl/certs whole each time (docs/fleet.md,
# "Tokens and TLS": ~0.15 ms of a node's CPU per connect).
cat "$dir/$cert.key" "$dir/$cert.crt" "$dir/ca.pem" >"$dir/$cert.pem"
rm -f "$dir/$cert.csr"
chmod 644 "$dir/ca.pem"
echo "$dir/$cert.pem"
