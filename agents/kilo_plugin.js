// paneboard: the Kilo Code door. Written by `paneboard hook install kilo`; removed by
// `paneboard hook uninstall kilo`. Checked with @kilocode/cli-linux-x64 7.7.9. No dependencies.
//
// Kilo Code is a fork of OpenCode and loads OpenCode's plugins: this is paneboard's OpenCode
// plugin (agents/opencode_plugin.js), with Kilo Code's names. In each Kilo Code process it
//  * serves a private Unix socket DIR/<pid>.sock beside a registry file DIR/<pid>.json, with
//    DIR = $XDG_RUNTIME_DIR/paneboard-kilo, else $XDG_CACHE_HOME (~/.cache)/paneboard-kilo
//    (mode 0700; never a name in /tmp, which another user could make first);
//  * once the first session starts, starts the paneboard listener (`paneboard hook
//    session-start --agent kilo`), which hands prompts to that socket and ends with this
//    process (until then prompts wait on the board);
//    Not in `kilo run`, which exits at its first idle moment: a prompt would never run;
//  * for each line {"id": ID, "text": TEXT} on the socket, starts a turn with TEXT in the session
//    last used here (client.session.promptAsync: at once when idle, after the current turn when
//    busy) and answers {"ok": true, "session": ID}, or {"ok": false, "error": WHY};
//  * adds the listener's context line (who this agent is, how to post) to the system prompt.
