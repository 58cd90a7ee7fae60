#!/usr/bin/env bash
# Makes, once, a Python venv with mobgap (requirements.txt beside this script) and prints the path
# of its python. Cached outside the checkout, in ~/.cache/keepalive/mobgap-<hash of
# requirements.txt>, so a change of pins makes a new one. A few hundred MB from PyPI the first
# time; instant afterwards.
# Usage: scripts/mobgap/venv.sh            (prints …/bin/python)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../python-venv.sh" "$here/requirements.txt" mobgap
