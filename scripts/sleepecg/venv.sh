#!/usr/bin/env bash
# Makes, once, a Python venv with the reference sleepecg (requirements.txt beside this script) and
# prints the path of its python. Cached outside the checkout, in
# ~/.cache/keepalive/sleepecg-<hash of requirements.txt>, so a change of pins makes a new one.
# About 700 MB and a minute or two from PyPI the first time; instant afterwards.
# Usage: scripts/sleepecg/venv.sh            (prints …/bin/python)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../python-venv.sh" "$here/requirements.txt" sleepecg
