#!/usr/bin/env bash
# As users get it: build the wheel, install it with the nats, tui and mcp extras into a fresh
# venv outside the checkout, and run there what a user runs: a round trip, the agent hooks,
# doctor, the NATS store, and the benchmark's quick run (`top` in a terminal and `paneboard
# mcp` among its scenarios);
# then the README's `pipx install` of the wheel.
# (tests/test_wheel.py covers the same wheel without any extra.)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
python3 -m venv venv
venv/bin/pip install -q --upgrade pip
venv/bin/pip wheel -q --no-deps -w dist "$src"
wheel=$(ls dist/paneboard-*.whl)
venv/bin/pip install -q "$wheel[nats,tui,mcp]"
pb=$work/venv/bin/paneboard
export PANEBOARD_HOME=$work/home PANEBOARD_BOARD=wheel-check
unset PANEBOARD_STORE PANEBOARD_AGENT PYTHONPATH

say() { printf 'wheel-check: %s\n' "$*"; }
say "$("$pb" --version)"
id=$("$pb" post --as alice --to bob "from the wheel")
"$pb" listen --as bob --door stdout > listened.jsonl 2> listen.err &
for _ in $(seq 100); do grep -q "$id" listened.jsonl 2>/dev/null && break; sleep 0.1; done
grep -q "$id" listened.jsonl || { say "listener never delivered $id"; cat listen.err; exit 1; }
kill %1; wait %1 || true
"$pb" ack "$id" --as bob
[ "$("$pb" status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["recipients"]["bob"]["stage"])')" = acked ]
say "post -> listen -> ack round trip: ok"

# seen: a stand-in session on a Unix socket writes each message it takes as a user record of a
# transcript whose folders it makes only then (as Claude Code does with its first turn).
cat > session.py <<'PY'
import json, os, socket, sys
path, transcript = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen()
while True:
    conn, _ = server.accept()
    with conn:
        line = conn.makefile().readline()
    os.makedirs(os.path.dirname(transcript), exist_ok=True)
    with open(transcript, "a") as f:
        f.write(json.dumps({"type": "user", "message": json.loads(line)["message"]}) + "\n")
PY
python3 session.py "$work/inbox.sock" "$work/claude/projects/p/t.jsonl" &
session=$!
for _ in $(seq 50); do [ -S "$work/inbox.sock" ] && break; sleep 0.1; done
"$pb" listen --as carol --door claude-inbox --socket "$work/inbox.sock" \
  --transcript "$work/claude/projects/p/t.jsonl" 2> seen.err &
carol=$!
id=$("$pb" post --as alice --to carol "to be seen")
"$pb" wait "$id" --until seen --timeout 20 || { say "never seen: $id"; cat seen.err; exit 1; }
kill "$carol" "$session"; wait "$carol" "$session" || true
say "claude-inbox -> transcript -> seen: ok"

mkdir project
"$pb" hook install --mode stop --as bob claude --project project
echo '{"session_id":"s","cwd":"'"$work/project"'"}' | "$pb" hook session-start --as bob --mode stop >/dev/null
id=$("$pb" post --as alice --to bob "at the next stop")
echo '{"session_id":"s","cwd":"'"$work/project"'"}' | "$pb" hook stop --as bob | grep -q "$id"
(cd project && "$pb" doctor --as bob) > doctor.out || true
grep -q "claude hooks use agent bob" doctor.out || { cat doctor.out; exit 1; }
"$pb" hook uninstall claude --project project
export CODEX_HOME=$work/codex-home
"$pb" hook install codex --as bob --project project --trust > codex.out
grep -q 'trusted_hash = "sha256:' "$CODEX_HOME/config.toml" || { cat codex.out; exit 1; }
"$pb" hook uninstall codex --project project | grep -q "removed the trust of 1 paneboard hook"
if grep -q trusted_hash "$CODEX_HOME/config.toml"; then say "trust left in config.toml"; exit 1; fi
unset CODEX_HOME
say "codex hooks: install --trust, uninstall takes the trust back: ok"
say "hook install / session-start / stop / uninstall, doctor: ok"

if command -v nats-server >/dev/null; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  nats-server -a 127.0.0.1 -p "$port" -js -sd "$work/js" > nats.log 2>&1 &
  for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
  store="nats://127.0.0.1:$port/wheel"
  id=$("$pb" post --store "$store" --as alice --to bob "on NATS")
  "$pb" open --store "$store" --as bob | grep -q "$id"
  say "the NATS store with the nats extra: ok"
  kill %1 2>/dev/null || true
fi

(cd "$src" && "$work/venv/bin/python" -m bench --quick --out "$work/bench")
say "python -m bench --quick from the wheel: ok"

python3 -m venv pipx-venv
pipx-venv/bin/pip install -q pipx
PIPX_HOME=$work/pipx PIPX_BIN_DIR=$work/pipx-bin pipx-venv/bin/pipx install -q "$wheel" >/dev/null
"$work/pipx-bin/paneboard" --version
say "pipx install of the wheel: ok"
