#!/usr/bin/env bash
# The main job on the embedded default, in a temporary home: alice hands bob work.
set -euo pipefail
export PANEBOARD_HOME=$(mktemp -d)/home PANEBOARD_BOARD=demo
trap 'rm -rf "$(dirname "$PANEBOARD_HOME")"' EXIT
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

run paneboard post --as alice --to bob "Please review the retry logic in fetch.py"
urgent=$(paneboard post --as alice --to bob --priority urgent "CI is red on main: look first")
say "paneboard post --as alice --to bob --priority urgent \"CI is red on main: look first\""; echo "$urgent"
run paneboard open --as bob
run paneboard ack --as bob "$urgent" --note "fixed in 3f2a1c"
run paneboard status "$urgent"
run paneboard open --as bob
run paneboard log
