"""Codex: its hooks in ``DIR/.codex/hooks.json`` and their trust, the `codex queue` door.

A session's SessionStart hook starts a listener whose door is `codex queue` on the hook's
thread (`codex_thread`), lasting while the thread stays loaded; the listener follows the
thread's rollout file to post `seen`. The Stop hook (`--mode stop` or `both`) hands prompts
over as the block reason, and answers ``{"continue": true}`` with nothing to hand over.
Codex runs new or changed hooks only once trusted (`codex_trust`); `hook install codex
--trust` records that trust as Codex does. `--mcp` registers `paneboard mcp` in
``DIR/.codex/config.toml``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.agents import codex_trust as trust
from paneboard.agents.base import (
    Change,
    DoctorRequest,
    DoorRequest,
    ListenOption,
    Setup,
    WakeRequest,
)
from paneboard.agents.codex_thread import (
    CodexThread,
    Rollout,
    check_thread_id,
    codex_home,
    thread_from_hook,
    thread_loaded,
    until_unloaded,
)
from paneboard.agents.hookfile import HookFileAgent, is_ours, load
from paneboard.agents.mcpconfig import TomlServers
from paneboard.agents.wake import resume_door
from paneboard.listener.doors.base import Door, Outcome
from paneboard.listener.doors.process import child_env, run_command
from paneboard.listener.doors.resume import Mark
from paneboard.listener.doors.simple import _which
from paneboard.listener.seen import Sighting, content_texts, field
from paneboard.protocol.errors import BadInput, DoorFailed, DoorUnavailable, PaneboardError
from paneboard.protocol.posts import Prompt
from paneboard.state import proc
from paneboard.state.health import Check

ARG_MAX_ONE = 128 * 1024 - 1  # Linux refuses a single argument longer than this
REVIEW = (
    "Codex runs new or changed hooks only once they are trusted: at its next start it shows "
    '"Hooks need review"; choose "Trust all and continue" (or install with --trust to record '
    "the trust in {config} now)."
)


def config_path(env: Mapping[str, str]) -> Path:
    """Codex's config: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`."""
    return codex_home(env) / "config.toml"


def running_codex(pid: int) -> str | None:
    """The executable of process *pid* if it is a Codex binary (the daemon that runs a hook)."""
    exe = proc.executable(pid)
    return exe if exe is not None and os.path.basename(exe) == "codex" else None


@dataclass(frozen=True)
class Codex(HookFileAgent):
    def install(self, setup: Setup) -> list[Change]:
        config = config_path(setup.env)
        if setup.trust:
            # the trust of the hooks.json about to be written, checked before any write
            trust.write_trust(config, self._trusted(setup, planned=True), write=False)
        return super().install(setup) + self._trust(setup, config)

    def uninstall(self, setup: Setup) -> list[Change]:
        config = config_path(setup.env)
        trust.trust_state(config, {})  # refuse a broken config.toml before writing anything
        path = self.path(setup.project)
        data = load(path)
        assert self.mcp is not None
        self.mcp.check(setup.project)
        entries = trust.wanted(path, data, is_ours)
        if entries:
            trust.remove_trust(config, entries, write=False)  # refused before any write
        changes = [self._unhook(path, data, setup.project)]
        if entries and (gone := trust.remove_trust(config, entries)):
            text = f"removed the trust of {gone} paneboard hook(s) from {trust.written_to(config)}"
            changes.append(Change(text, config, True))
        return changes + self._unregister(setup)

    def _trusted(self, setup: Setup, *, planned: bool) -> dict[str, str]:
        """The trust entries of paneboard's hooks in the project's hooks.json: as it is, or
        as this install will write it (*planned*)."""
        path = self.path(setup.project)
        data = self.merged(load(path), setup) if planned else load(path)
        return trust.wanted(path, data, is_ours)

    def _trust(self, setup: Setup, config: Path) -> list[Change]:
        """Say that Codex will ask to review the hooks; with --trust, record the trust."""
        if not setup.trust:
            changes = [Change(REVIEW.format(config=config))]
        else:
            entries = self._trusted(setup, planned=False)
            changed = trust.write_trust(config, entries)
            done = "trusted" if changed else "already trusted:"
            where = trust.written_to(config) if changed else config
            text = f"{done} {len(entries)} paneboard hook(s) in {where}"
            changes = [Change(text, config, changed)]
        if not trust.project_trusted(config, setup.project):
            hooks_json, project = self.path(setup.project), setup.project
            why = (
                f"Codex reads {hooks_json} only in a trusted project; {project} is not trusted yet."
            )
            changes.append(Change(why))
        return changes

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        """The door is `codex queue` on the hook's thread, and the listener lasts while the
        thread stays loaded (the daemon that runs it, and so the hook's parent, outlive the
        session). Without `codex` on its PATH, the listener uses the binary of *parent*
        (Codex's daemon), which does `codex queue` too."""
        thread = thread_from_hook(self.session(data), self.transcript(data), environ)
        args = ["--door", "codex-queue", "--thread", thread.id, "--until-unloaded"]
        found = running_codex(parent)
        if shutil.which("codex", path=environ.get("PATH")) is None and found:
            args += ["--codex-bin", found]
        return args, {"CODEX_HOME": str(thread.home)}

    def open_door(self, request: DoorRequest) -> Door:
        thread = request.value("--thread") or request.env.get("CODEX_THREAD_ID")
        if not thread:
            raise BadInput("--door codex-queue needs --thread ID or CODEX_THREAD_ID")
        codex_bin = request.value("--codex-bin") or "codex"
        door = CodexQueueDoor(check_thread_id(thread), codex_bin, request.env, request.timeout)
        door.until_unloaded = request.given("--until-unloaded")
        return door

    def sighting(self, mark: Path, door: Door, transcript: Path | None) -> Sighting | None:
        """The rollout given, else the thread's, found once Codex writes it."""
        if transcript is not None or not isinstance(door, CodexQueueDoor):
            return super().sighting(mark, door, transcript)
        thread = door.codex_thread()
        source = str(self.seen_source)
        rollout = Rollout(thread)
        return Sighting(mark, source, rollout.find(), self.user_texts, pending=rollout)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``response_item`` message with role ``user`` of a rollout file: a queued message
        once a turn runs it (``task_started`` with ``turn_trigger: "queue"``, then this item)."""
        payload = field(record, "payload")
        if record.get("type") != "response_item" or payload.get("type") != "message":
            return []
        return content_texts(payload.get("content")) if payload.get("role") == "user" else []

    def until_session_over(self, door: Door) -> Callable[[], Awaitable[str]] | None:
        """The thread unloaded (`--until-unloaded`): the daemon that runs it outlives the
        session."""
        if not isinstance(door, CodexQueueDoor) or not door.until_unloaded:
            return None
        return functools.partial(until_unloaded, door.codex_thread())

    def wake_session(self, request: DoorRequest) -> str | None:
        """The thread is the session: `--thread`, else `$CODEX_THREAD_ID`."""
        return request.value("--thread") or request.env.get("CODEX_THREAD_ID") or None

    def wake_door(self, request: WakeRequest) -> Door:
        """`codex exec resume --json ID -` (the text on its input): one headless turn on the
        same thread, appended to its rollout file (where `seen` is read). Admitted: its events
        ``thread.started`` with that thread id, then ``turn.started``. The id must be a UUID:
        Codex takes any other word as a thread name, and with none of that name starts a new
        thread."""
        return codex_resume(request)

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        project, env = ask.project, ask.env
        checks = [_version(env), *self.hook_checks(project)]
        return checks + _trust_checks(self.path(project), project, env) + self.mcp_checks(project)


def _version(env: Mapping[str, str]) -> Check:
    codex = shutil.which("codex", path=env.get("PATH"))
    if codex is None:
        return Check("warn", "codex", "no `codex` on PATH")
    try:
        done = subprocess.run(
            [codex, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            env=child_env(env),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("fail", "codex", f"{codex} --version failed: {exc}")
    out = done.stdout.strip()
    version = out.splitlines()[-1] if out else "(no version printed)"
    return Check("ok" if done.returncode == 0 else "fail", "codex", f"{codex}: {version}")


def _trust_checks(path: Path, project: Path, env: Mapping[str, str]) -> list[Check]:
    """Whether Codex trusts paneboard's hooks as they are now (it skips hooks it does not)."""
    try:
        entries = trust.wanted(path, load(path), is_ours)
        if not entries:
            return []
        config = config_path(env)
        states = trust.trust_state(config, entries)
        project_ok = trust.project_trusted(config, project.absolute())
    except PaneboardError as exc:
        return [Check("fail", "trust", f"codex: {exc}")]
    bad = [f"{key.split(':')[-3]} {state}" for key, state in states.items() if state != "trusted"]
    if bad:
        fix = "Codex asks to review them at its next start, or: hook install codex --trust"
        why = f"paneboard hooks not trusted in {config}: {', '.join(bad)} ({fix})"
        checks = [Check("warn", "trust", f"codex: {why}")]
    else:
        checks = [
            Check("ok", "trust", f"codex: paneboard's {len(states)} hook(s) trusted in {config}")
        ]
    if not project_ok:
        where = f"{project} is not a trusted project"
        checks.append(Check("warn", "trust", f"codex: {where}: Codex skips its {path}"))
    return checks


def codex_resume(request: WakeRequest) -> Door:
    """The door a wake of Codex thread *request.session* opens (`BadInput` for an id that is
    not a UUID)."""
    thread = check_thread_id(request.session)
    argv = ["codex", "exec", "resume", "--json", "--skip-git-repo-check", "--", thread, "-"]
    marks: tuple[Mark, ...] = (
        lambda e: e.get("type") == "thread.started" and e.get("thread_id") == thread,
        lambda e: e.get("type") == "turn.started",
    )
    return resume_door(request, "codex-resume", "Codex", argv, marks)


_RECEIPT = re.compile(rb"Queued message \S+ for thread \S+")


class CodexQueueDoor:
    """`codex queue --thread ID --message TEXT`, which needs codex's own receipt to count."""

    name = "codex-queue"
    until_unloaded = False  # the listener stops once no Codex process has the thread loaded

    def __init__(self, thread: str, codex_bin: str, env: Mapping[str, str], timeout: float) -> None:
        self.thread = thread
        self.codex_bin = codex_bin
        self.env = child_env(env)
        self.timeout = timeout

    def executable(self) -> str:
        if os.sep in self.codex_bin:
            if os.access(self.codex_bin, os.X_OK) and os.path.isfile(self.codex_bin):
                return self.codex_bin
            raise DoorUnavailable(self.name, f"{self.codex_bin} is not an executable file")
        found = _which(self.codex_bin, self.env.get("PATH", os.defpath))
        if found is None:
            raise DoorUnavailable(self.name, f"no `{self.codex_bin}` on PATH")
        return found

    def check(self) -> None:
        if not self.thread:
            raise DoorUnavailable(self.name, "no thread id (give --thread or set CODEX_THREAD_ID)")
        self.executable()

    def codex_thread(self) -> CodexThread:
        return CodexThread(self.thread, codex_home(self.env))

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        self.check()
        thread = self.codex_thread()
        if not thread_loaded(thread):
            reason = f"thread not running: no Codex process has thread {self.thread} loaded"
            raise DoorUnavailable(self.name, f"{reason} (no lock on {thread.lock})")
        if len(text.encode()) > ARG_MAX_ONE:
            raise DoorUnavailable(
                self.name,
                f"the prompt is {len(text.encode())} bytes; "
                f"one argument to codex can carry {ARG_MAX_ONE}",
            )
        argv = [self.executable(), "queue", "--thread", self.thread, "--message", text]
        done = await run_command(argv, b"", self.env, self.timeout)
        if done.timed_out:
            return "unknown"
        if done.returncode == 0 and _RECEIPT.search(done.output):
            return "accepted"
        if done.returncode == 0:
            raise DoorFailed(self.name, f"codex exited 0 without its receipt: {done.tail()}")
        raise DoorFailed(self.name, f"codex exited {done.returncode}: {_last_error(done.output)}")


def _last_error(output: bytes) -> str:
    """codex's own error line, without its harmless warnings."""
    lines = [
        ln
        for ln in output.decode(errors="replace").splitlines()
        if ln.strip() and not ln.startswith("WARNING:")
    ]
    return lines[-1].strip()[-300:] if lines else "(no output)"


CODEX = Codex(
    kind="codex",
    title="Codex",
    modes=("listen", "stop", "both"),
    default_mode="listen",
    hooks_file=".codex/hooks.json",
    events={"session-start": "SessionStart", "stop": "Stop"},
    door="codex-queue",
    seen_source="codex-rollout",
    mcp=TomlServers(".codex/config.toml"),
    trusts=True,
    trust_help="also record the hooks as trusted in Codex's config.toml",
    idle_reply='{"continue": true}',
    cli_argv_suffixes=("/codex",),
    listen_options=(
        ListenOption("--thread", "the thread id (default $CODEX_THREAD_ID)", "ID"),
        ListenOption("--codex-bin", "the codex executable", "PATH", "codex"),
        ListenOption("--until-unloaded", "stop once no Codex process has the thread loaded", None),
        ListenOption(
            "--transcript",
            "without it, the thread's rollout file under $CODEX_HOME/sessions",
            "PATH",
        ),
    ),
)
