"""Qoder CLI (`@qoder-ai/qodercli`, checked with 1.1.52): its hooks in
``DIR/.qoder/settings.json``, its cross-session inbox socket, its doctor.

Qoder CLI carries Claude Code's cross-session inbox: an interactive session serves a Unix
socket, ``$XDG_RUNTIME_DIR/qoder-socks/<pid>.sock`` (else ``/tmp/qoder-socks-<uid>/``; mode
0600, its folder 0700), registers it in ``~/.qoder/sessions/<pid>.json`` (``messagingSocketPath``,
``sessionId``, ``status``), and gives it to its hooks as ``QODER_MESSAGING_SOCKET``. It does so
only with its ``CROSS_SESSION`` feature on, which is off by default:
``QODER_FEATURE_CROSS_SESSION=1`` in the session's environment turns it on. A line
``{"type": "user", "message": {"role": "user", "content": ENVELOPE}}`` starts a turn with the
text, where ENVELOPE is
``<cross-session-message from-name="paneboard">``, a newline, the text, a newline and
``</cross-session-message>`` (a plain text, unlike Claude Code's, is dropped as
``invalid-envelope``; a ``<`` opening that tag inside the text is written ``<\\``). By default
(permission mode not `bypass`) Qoder CLI accepts it; a session with ``security.crossSessionInbound``
set holds or refuses as that says.

The SessionStart hook (Claude-style hooks, run in a folder the person has trusted) gets
``session_id`` and ``transcript_path`` (``~/.qoder/projects/<cwd, every / a ->/<session>.jsonl``)
and starts the listener with the ``qoder-inbox`` door; SessionEnd stops it. `delivered` means
the line was written to the session's socket; `seen` comes from the transcript, whose ``user``
record carries the text (``Another Qoder session sent a message:`` and the envelope) as the
turn starts, as Claude Code's does.

Its model, offline: Qoder CLI's models are its vendor's service behind its own sign-in (the
model request needs a context created at login; its own-key providers need that account's
permission from the vendor's server), and no variable points it at a loopback stand-in (the
endpoint override ``QODER_SERVER_ENDPOINT`` is read only by its China build, and only as an
https origin). What it has is a stand-in of its own: a hidden option, ``--fake-responses
FILE``, replays model responses from a file, one per model request, in place of the request
(with ``QODER_FAKE_STREAM_DELAY_MS`` between a response's chunks). With it a turn started
through the inbox runs to its end, tools and all: a busy session takes a prompt after its
running turn, and a round trip runs `paneboard answer` in its ``Bash`` tool (checked,
tests/real/test_qoder_turns.py). Its Stop hook runs at such a turn's end, with Claude Code's
input (``session_id``, ``transcript_path``, ``stop_hook_active``, ``last_assistant_message``;
checked by hand once); whether it takes a block reply as the next turn was not checked, and
`--mode stop` is not offered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec

from paneboard.agents.base import Agent, DoctorRequest, DoorRequest, ListenOption
from paneboard.agents.claude import Claude, ClaudeInboxDoor
from paneboard.listener.doors.base import Door
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Prompt
from paneboard.state.health import Check

SOCKET = "QODER_MESSAGING_SOCKET"  # the session's inbox, in its hooks' environment
TAG = "cross-session-message"


def envelope(text: str) -> str:
    """*text* as Qoder CLI's inbox takes it: in its envelope, a tag inside it escaped."""
    for tag in (f"<{TAG}", f"</{TAG}"):
        text = text.replace(tag, "<\\" + tag[1:])
    return f'<{TAG} from-name="paneboard">\n{text}\n</{TAG}>'


class QoderInboxDoor(ClaudeInboxDoor):
    """One user message, in Qoder CLI's envelope, on a Qoder CLI session's inbox socket (paced
    as Claude Code's; its admission is not read: the line written is `delivered`)."""

    name = "qoder-inbox"

    def _line(self, prompt: Prompt, text: str) -> bytes:
        message = {"role": "user", "content": envelope(text)}
        return msgspec.json.encode({"type": "user", "message": message})


@dataclass(frozen=True)
class Qoder(Claude):
    """Qoder CLI, reached through its inbox socket by a listener its SessionStart hook starts."""

    def listen_args(
        self, data: Mapping[str, object], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        socket = environ.get(SOCKET)
        if not socket:
            why = "its cross-session inbox is off: QODER_FEATURE_CROSS_SESSION=1 turns it on"
            raise BadInput(f"no {SOCKET} in this session ({why})")
        return ["--door", "qoder-inbox", "--socket", socket, "--parent-pid", str(parent)], {}

    def open_door(self, request: DoorRequest) -> Door:
        path = request.value("--socket") or request.env.get(SOCKET)
        if not path:
            raise BadInput(f"--door qoder-inbox needs --socket PATH or {SOCKET}")
        return QoderInboxDoor(Path(path), min(request.timeout, 10.0))

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        """Its inbox socket (from the session's environment: `--socket` is Claude Code's), its
        hooks."""
        return [self.inbox_check(ask.env.get(SOCKET)), *self.hook_checks(ask.project)]

    # Claude Code's background sessions (`claude --bg`, `--bg --resume`) are not Qoder CLI's:
    # not spawned nor woken so (its headless resume needs a login: docs/agents.md).
    spawn = Agent.spawn
    stop_session = Agent.stop_session
    wake_session = Agent.wake_session
    wake_door = Agent.wake_door


QODER = Qoder(
    kind="qoder",
    title="Qoder CLI",
    modes=("listen",),
    default_mode="listen",
    hooks_file=".qoder/settings.json",
    events={"session-start": "SessionStart", "session-end": "SessionEnd"},
    door="qoder-inbox",
    seen_source="qoder-transcript",
    cli_argv_suffixes=("/qodercli.js",),
    listener_runner="its inbox",
    listen_options=(
        ListenOption("--socket", f"the session's inbox socket (default ${SOCKET})", "PATH"),
    ),
)
