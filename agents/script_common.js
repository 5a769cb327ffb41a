// The parts every paneboard script shares (agents/script_common.js, put in at install).

// DIR for the sockets: $XDG_RUNTIME_DIR/NAME, else $XDG_CACHE_HOME (~/.cache)/NAME, mode 0700
// and this user's (never a name in /tmp, which another user could make first).
function privateFolderNamed(name) {
  const env = process.env;
  const base = env.XDG_RUNTIME_DIR || env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  const dir = path.join(base, name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== process.getuid() || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private folder of this user`);
  }
  return dir;
}

// A killed host leaves its socket and registry behind: clear those of ended processes.
function sweep(dir) {
  for (const name of fs.readdirSync(dir)) {
    const pid = Number((/^(\d+)\.json$/.exec(name) || [])[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if (e.code !== "ESRCH") continue;
      for (const ext of [".json", ".sock"]) fs.rmSync(path.join(dir, pid + ext), { force: true });
    }
  }
}

// One line in, one JSON line out, per connection: `handle(line)` answers it.
function serveLines(socket, handle) {
  const server = net.createServer((conn) => {
    let buf = "";
    let taken = false;
    conn.setEncoding("utf8");
    conn.on("error", () => {});
    conn.on("data", (chunk) => {
      buf += chunk;
      const end = buf.indexOf("\n");
      if (taken || end < 0) return;
      taken = true;
      Promise.resolve()
        .then(() => handle(buf.slice(0, end)))
        .catch((e) => ({ ok: false, error: String(e) }))
        .then((reply) => conn.end(JSON.stringify(reply) + "\n"));
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve(server));
  });
}

// Runs the session-start hook (COMMAND) with *input* on its stdin and the socket in
// $variable; resolves once it has answered (or failed), its context line kept in
// holder.context.
function runHook(socket, variable, cwd, input, holder) {
  const [exe, ...args] = COMMAND;
  const env = { ...process.env, [variable]: socket };
  const child = spawn(exe, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (err += c));
  child.stdin.on("error", () => {}); // a hook that exits unread must not take the host down
  child.stdin.end(JSON.stringify(input));
  return new Promise((resolve) => {
    child.on("error", (e) => {
      holder.context = `paneboard: could not start the listener: ${e}`;
      resolve();
    });
    child.on("close", (code) => {
      try {
        holder.context = JSON.parse(out).hookSpecificOutput.additionalContext;
      } catch {
        holder.context = `paneboard: the listener did not start (exit ${code}): ${err.trim()}`;
      }
      resolve();
    });
  });
}
