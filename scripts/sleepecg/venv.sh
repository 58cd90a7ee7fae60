#!/usr/bin/env bash
# Makes, once, a Python venv with the reference sleepecg (requirements.txt beside this script) and
# prints the path of its python. Cached outside the checkout, in
# ~/.cache/keepalive/sleepecg-<hash of requirements.txt>, so a change of pins makes a new one.
# About 700 MB and a minute or two from PyPI the first time; instant afterwards.
# Usage: scripts/sleepecg/venv.sh            (prints …/bin/python)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
requirements="$here/requirements.txt"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/keepalive"
venv="$cache/sleepecg-$(sha256sum "$requirements" | cut -c1-16)"
mkdir -p "$cache"

# Two test processes may ask at once: one builds, the other waits for it.
exec 9>"$venv.lock"
flock 9

if [ ! -f "$venv/.complete" ]; then
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    # Debian splits venv/ensurepip out of python3.
    echo "sleepecg-venv: installing python3-venv" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >&2 || {
      $SUDO apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >&2
    }
  fi
  echo "sleepecg-venv: making $venv (once)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --no-input --disable-pip-version-check -q -r "$requirements" >&2
  touch "$venv/.complete"
fi
echo "$venv/bin/python"
