// paneboard: the OpenCode door. Written by `paneboard hook install opencode`; removed by
// `paneboard hook uninstall opencode`. Checked with opencode-ai 1.18.33. No dependencies.
//
// In each OpenCode process it
//  * serves a private Unix socket DIR/<pid>.sock beside a registry file DIR/<pid>.json, with
//    DIR = $XDG_RUNTIME_DIR/paneboard-opencode, else $XDG_CACHE_HOME (~/.cache)/paneboard-opencode
//    (mode 0700; never a name in /tmp, which another user could make first);
//  * once the first session starts, starts the paneboard listener (`paneboard hook
//    session-start --agent opencode`), which hands prompts to that socket and ends with this
//    process (until then prompts wait on the board);
//    Not in `opencode run`, which exits at its first idle moment: a prompt would never run;
//  * for each line {"id": ID, "text": TEXT} on the socket, starts a turn with TEXT in the session last
//    used here (client.session.promptAsync: at once when idle, after the current turn when
//    busy) and answers {"ok": true, "session": ID}, or {"ok": false, "error": WHY};
//  * adds the listener's context line (who this agent is, how to post) to the system prompt.
import { spawn } from "child_process";
import fs from "fs";
import net from "net";
import os from "os";
import path from "path";

const COMMAND = ["paneboard", "hook", "session-start", "--agent", "opencode"];
const ONE_SHOT = process.argv[2] === "run"; // ["bun", "/$bunfs/root/src/index.js", "run", …]

// OpenCode may load a plugin twice in one process: the state is the module's, not the call's.
const state = { session: null, children: new Set(), context: "", started: false, socket: null,
  listener: null };

// paneboard: the shared parts (agents/script_common.js) go here.

function privateFolder() {
  return privateFolderNamed("paneboard-opencode");
}

async function handOver(client, line) {
  const { text } = JSON.parse(line);
  if (typeof text !== "string" || !text) return { ok: false, error: "no text" };
  if (!state.session) return { ok: false, error: "no session yet in this OpenCode" };
  const body = { parts: [{ type: "text", text }] };
  const r = await client.session.promptAsync({ path: { id: state.session }, body });
  if (r && r.error) return { ok: false, error: JSON.stringify(r.error) };
  return { ok: true, session: state.session };
}

function serve(client, socket) {
  return serveLines(socket, (line) => handOver(client, line));
}

// Resolves once the session-start hook has answered (or failed); its context line is kept.
function startListener(socket, directory) {
  const input = { hook_event_name: "SessionStart", cwd: directory };
  return runHook(socket, "PANEBOARD_OPENCODE_SOCKET", directory, input, state);
}

async function open(client, directory) {
  const dir = privateFolder();
  sweep(dir);
  const socket = path.join(dir, `${process.pid}.sock`);
  const registry = path.join(dir, `${process.pid}.json`);
  fs.rmSync(socket, { force: true });
  await serve(client, socket);
  const record = JSON.stringify({ pid: process.pid, socket, directory });
  fs.writeFileSync(registry, record + "\n", { mode: 0o600 });
  process.on("exit", () => {
    for (const p of [socket, registry]) fs.rmSync(p, { force: true });
  });
  state.socket = socket;
}

// The listener starts with the first session: there is no session to hand prompts to before.
// A session's id starts with "ses"; Kilo Code's title requests run as "title-<id>", no session.
function sessionStarted(id, directory) {
  if (!String(id).startsWith("ses")) return;
  state.session = id;
  if (state.socket && !state.listener && !ONE_SHOT) state.listener = startListener(state.socket, directory);
}

export const PaneboardDoor = async ({ client, directory }) => {
  if (!state.started) {
    state.started = true;
    try {
      await open(client, directory);
    } catch (e) {
      state.context = `paneboard: the OpenCode door is closed: ${e.message || e}`;
    }
  }
  return {
    event: async ({ event }) => {
      const p = event.properties || {};
      if (event.type === "session.created" && p.info) {
        if (p.info.parentID) state.children.add(p.info.id);
        else sessionStarted(p.info.id, directory);
      }
      if ((event.type === "session.status" || event.type === "session.idle") && p.sessionID) {
        if (!state.children.has(p.sessionID)) sessionStarted(p.sessionID, directory);
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (input.sessionID && !state.children.has(input.sessionID)) {
        sessionStarted(input.sessionID, directory);
      }
      if (state.listener) await state.listener;
      if (state.context) output.system.push(state.context);
    },
  };
};
