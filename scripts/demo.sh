#!/usr/bin/env bash
# The main job on the embedded default, in a temporary home: alice hands work to bob and
# carol; their listeners hand it over through their doors; they close the loop. The board
# stays afterwards, to be seen live with `paneboard top`.
set -euo pipefail
demo=$(mktemp -d)
export PANEBOARD_HOME=$demo/home PANEBOARD_BOARD=demo
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT  # the board stays, for `top`
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

# Two prompts posted while bob has no listener: they wait on the board.
run paneboard post --as alice --to bob "Please review the retry logic in fetch.py"
say 'urgent=$(paneboard post --as alice --to bob --priority urgent "CI is red on main: look first")'
urgent=$(paneboard post --as alice --to bob --priority urgent "CI is red on main: look first")
run paneboard open --as bob

# bob's listener catches up (urgent first) and hands each prompt to its door (stdout, here).
say "paneboard listen --as bob --door stdout > bob.jsonl &"
paneboard listen --as bob --door stdout > "$demo/bob.jsonl" 2> "$demo/bob.log" &
pids+=($!)
run paneboard wait "$urgent" --until delivered --timeout 10
say "head -1 bob.jsonl | jq -r .text    # what bob's agent received"
head -1 "$demo/bob.jsonl" | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["text"], end="")'
run paneboard ack --as bob "$urgent" --note "fixed in 3f2a1c"
run paneboard status "$urgent"

# carol's door is a command that answers every prompt itself; alice asks and gets the answer.
say "paneboard listen --as carol --door exec -- sh -c 'paneboard answer \"\$PANEBOARD_ID\" \"carol: all 214 tests pass\"' &"
paneboard listen --as carol --door exec -- sh -c 'paneboard answer "$PANEBOARD_ID" "carol: all 214 tests pass"' 2> "$demo/carol.log" &
pids+=($!)
run paneboard ask --as alice --to carol "Run the test suite on main and tell me the result" --timeout 20
run paneboard who
run paneboard log

# The board stays: see it live (agents, open prompts, posts; `q` quits), then remove it.
printf '\n\033[1mThe demo board is kept in %s. See it live with:\033[0m\n' "$demo"
printf '  %s top --home %s --board demo --as alice\n' "$(command -v paneboard)" "$PANEBOARD_HOME"
printf '\033[1mand remove it with:\033[0m\n  rm -rf %s\n' "$demo"
