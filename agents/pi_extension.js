// paneboard: the pi door. Written by `paneboard hook install pi` as .pi/extensions/paneboard.ts;
// removed by `paneboard hook uninstall pi`. Checked with pi 0.73.1. No dependencies.
//
// In each interactive pi process it
//  * serves a private Unix socket DIR/<pid>.sock beside a registry file DIR/<pid>.json
//    {"pid", "socket", "cwd", "sessionFile"}, with DIR = $XDG_RUNTIME_DIR/paneboard-pi, else
//    $XDG_CACHE_HOME (~/.cache)/paneboard-pi (mode 0700; never a name in /tmp, which another
//    user could make first);
//  * at the first session start, starts the paneboard listener (`paneboard hook session-start
//    --agent pi`), which hands prompts to that socket and ends with this process, and again
//    when the session file changes (/new, /resume, /fork). Not in print or JSON mode
//    (`pi -p`), which exits once its prompt is done: a prompt would never run;
//  * for each line {"id": ID, "text": TEXT} on the socket, gives TEXT to pi as a user message
//    (pi.sendUserMessage: a turn at once when idle, a follow-up after the current turn when
//    busy) and answers {"ok": true, "session": FILE, "busy": BOOL} once pi's `input` event has
//    shown it that text, else {"ok": false, "error": WHY}; for {"quit": true} (`paneboard
//    stop`), answers {"ok": true, "quitting": true} and quits pi its own way (ctx.shutdown);
//  * adds the listener's context line (who this agent is, how to post) to the system prompt.
import { spawn } from "child_process";
import fs from "fs";
import net from "net";
import os from "os";
import path from "path";

const COMMAND = ["paneboard", "hook", "session-start", "--agent", "pi"];
const TAKEN_WITHIN_MS = 5000;

// pi loads the extension again at each /new, /resume, /fork and /reload: what must outlive one
// load (the socket, the listener, its context line) is kept on the process, so the door stays
// open while pi switches sessions (it answers "not now" until the new load takes over).
const shared = (globalThis.__paneboardPi ??= {
  listener: null,
  context: "",
  sessionFile: null,
  server: null,
  socket: null,
  registry: null,
  handOver: null, // the current load's; none while pi switches sessions
});

// paneboard: the shared parts (agents/script_common.js) go here.

function privateFolder() {
  return privateFolderNamed("paneboard-pi");
}

// Resolves once the session-start hook has answered (or failed); its context line is kept.
function startListener(socket, cwd, sessionFile) {
  const input = { hook_event_name: "SessionStart", cwd, transcript_path: sessionFile || "" };
  return runHook(socket, "PANEBOARD_PI_SOCKET", cwd, input, shared);
}

function serve(socket) {
  const pending = { ok: false, error: "pi is switching sessions" };
  return serveLines(socket, (line) => (shared.handOver ? shared.handOver(line) : pending));
}

function closeDoor() {
  if (shared.server) shared.server.close();
  for (const p of [shared.socket, shared.registry]) if (p) fs.rmSync(p, { force: true });
  shared.server = shared.socket = shared.registry = shared.handOver = null;
}

async function openDoor(ctx) {
  if (!shared.server) {
    const dir = privateFolder();
    sweep(dir);
    const socket = path.join(dir, `${process.pid}.sock`);
    fs.rmSync(socket, { force: true });
    shared.server = await serve(socket);
    shared.socket = socket;
    shared.registry = path.join(dir, `${process.pid}.json`);
    process.once("exit", closeDoor);
  }
  const sessionFile = ctx.sessionManager.getSessionFile() || null;
  const record = { pid: process.pid, socket: shared.socket, cwd: ctx.cwd, sessionFile };
  fs.writeFileSync(shared.registry, JSON.stringify(record) + "\n", { mode: 0o600 });
}

export default function (pi) {
  const state = { ctx: null, waiting: new Map() };

  // pi shows every user message to `input` before it starts or queues the turn: the text
  // reaching here is pi's own word that it took the message.
  pi.on("input", async (event) => {
    const waiters = event.source === "extension" ? state.waiting.get(event.text) : null;
    if (waiters && waiters.length) waiters.shift()();
    return { action: "continue" };
  });

  async function handOver(line) {
    const { text, quit } = JSON.parse(line);
    if (quit === true) {
      // `paneboard stop`: pi's own quit (ctx.shutdown), once this answer is on its way.
      if (!state.ctx) return { ok: false, error: "no session yet in this pi" };
      const ctx = state.ctx;
      setTimeout(() => ctx.shutdown(), 50);
      return { ok: true, quitting: true };
    }
    if (typeof text !== "string" || !text) return { ok: false, error: "no text" };
    if (!state.ctx) return { ok: false, error: "no session yet in this pi" };
    const busy = !state.ctx.isIdle();
    const waiters = state.waiting.get(text) || [];
    state.waiting.set(text, waiters);
    const taken = new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        resolve(false);
      }, TAKEN_WITHIN_MS);
      waiters.push(waiter);
    });
    pi.sendUserMessage(text, { deliverAs: "followUp" });
    const ok = await taken;
    if (!waiters.length) state.waiting.delete(text);
    if (!ok) return { ok: false, error: `pi did not take the message within ${TAKEN_WITHIN_MS} ms` };
    return { ok: true, session: state.ctx.sessionManager.getSessionFile() || null, busy };
  }

  pi.on("session_start", async (_event, ctx) => {
    if (!ctx.hasUI) return; // print and JSON mode end with their prompt
    try {
      await openDoor(ctx);
    } catch (e) {
      shared.context = `paneboard: the pi door is closed: ${e.message || e}`;
      return;
    }
    state.ctx = ctx;
    shared.handOver = handOver;
    // A new session file (/new, /resume, /fork) starts the hook again: it replaces this
    // process's listener with one that follows the new file for `seen`.
    const file = ctx.sessionManager.getSessionFile() || "";
    if (!shared.listener || file !== shared.sessionFile) {
      shared.sessionFile = file;
      shared.listener = startListener(shared.socket, ctx.cwd, file);
    }
  });

  pi.on("session_shutdown", async (event) => {
    state.ctx = null;
    if (shared.handOver === handOver) shared.handOver = null;
    if (event.reason === "quit") closeDoor();
  });

  pi.on("before_agent_start", async (event) => {
    if (shared.listener) await shared.listener;
    if (!shared.context) return undefined;
    return { systemPrompt: `${event.systemPrompt}\n\n${shared.context}` };
  });
}
