#!/usr/bin/env bash
# Makes, once, a Python venv with exactly the pins of a requirements file and prints the path of
# its python. Cached outside the checkout, in ~/.cache/keepalive/<name>-<hash of the file>, so a
# change of pins makes a new one; instant once made.
# Usage: scripts/python-venv.sh REQUIREMENTS NAME      (prints …/bin/python)
set -euo pipefail
requirements=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
name=$2
cache="${XDG_CACHE_HOME:-$HOME/.cache}/keepalive"
venv="$cache/$name-$(sha256sum "$requirements" | cut -c1-16)"
mkdir -p "$cache"

# Two runs may ask at once: one builds, the other waits for it.
exec 9>"$venv.lock"
flock 9

if [ ! -f "$venv/.complete" ]; then
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    # Debian splits venv/ensurepip out of python3.
    echo "python-venv: installing python3-venv" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >&2 || {
      $SUDO apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >&2
    }
  fi
  echo "python-venv: making $venv (once)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --no-input --disable-pip-version-check -q -r "$requirements" >&2
  touch "$venv/.complete"
fi
echo "$venv/bin/python"
