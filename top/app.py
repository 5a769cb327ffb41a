"""`paneboard top`: a live view of one board, for the people who run the agents.

It follows the store the way a listener does (`BoardView`: inotify on the file log, the
ordered consumer on NATS) and the panes folder with inotify; nothing polls. Its fold counts
what `status` counts: only verified posts move a stage (this home's pins). The first
read of the board happens in a worker thread; after that each wake folds what is new
(a bisect per prompt that changed) and asks the tables to draw again, which Textual does
at most once a frame and only for the rows on screen.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import ClassVar

import anyio
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.timer import Timer

from paneboard.board import decide, policy, who
from paneboard.board.confirm import NOTE
from paneboard.board.context import Context
from paneboard.board.trust import verdicts_for
from paneboard.board.view import BoardView, Refresh
from paneboard.protocol.errors import PaneboardError
from paneboard.protocol.posts import Post
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state.filelog.tail import FolderWatcher
from paneboard.state.fold import BoardState, PromptState, stage
from paneboard.state.panes.presence import Presence
from paneboard.top.model import TopModel
from paneboard.top.rows import AgentSource, PostSource, PromptSource, fitted
from paneboard.top.screens import (
    AgentPicker,
    ConfirmScreen,
    PostScreen,
    ThreadScreen,
    thread_text,
)
from paneboard.top.table import Line, RowTable

KEY_HINTS = [
    "q quit",
    "enter open thread",
    "a by agent",
    "t by thread",
    "esc all",
    "c cancel",
    "o approve held",
    "O approve all from sender",
    "r refuse",
    "p post",
    "tab next pane",
    "↑ ↓ pgup pgdn move",
]
FRAME = 0.05  # posts arriving faster are shown together, at most this often
REMOTE_EVERY = 10.0  # at most this often, a board change also reads the store's presences (NATS)
# For the fault suite: `top-refresh` raises inside the reading of the board, as a bug would.
FAILPOINT = os.environ.get("PANEBOARD_FAILPOINT", "")
CSS = """
#status, #keys, #thread-keys { background: $panel; }
#agents { height: auto; max-height: 12; border: round $primary; }
#prompts { height: 2fr; border: round $accent; }
#posts { height: 1fr; border: round $secondary; }
#thread-scroll { border: round $accent; padding: 0 1; }
AgentPicker, ConfirmScreen, PostScreen { align: center middle; }
#picker, #confirm, #post {
    width: 90%; max-width: 110; height: auto; max-height: 80%;
    border: thick $primary; background: $surface; padding: 1 2;
}
#agents-list { height: auto; max-height: 20; }
.post-row { height: auto; }
#post-to { width: 2fr; }
#post-priority { width: 16; }
#post-thread { width: 1fr; }
#post-error { color: $error; }
"""


class TopApp(App[None]):
    TITLE = "paneboard top"
    CSS = CSS
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("a", "pick_agent", "agent"),
        Binding("t", "thread_filter", "thread"),
        Binding("escape", "clear_filter", "all"),
        Binding("c", "cancel_prompt", "cancel"),
        Binding("p", "post", "post"),
        Binding("o", "approve_prompt", "approve"),
        Binding("O", "approve_sender", "approve all from sender"),
        Binding("r", "refuse_prompt", "refuse"),
    ]

    def __init__(self, ctx: Context, *, stale: float = 300.0, own_process: bool = False) -> None:
        """*own_process*: the app is the process (`paneboard top`), so it takes SIGTERM and
        SIGHUP, and keeps the board it read out of the garbage collector's full passes."""
        super().__init__()
        self.ctx = ctx
        self.stale = stale
        self.own_process = own_process
        self.error: Exception | None = None  # why it stopped, said in one line by run_top
        self.loaded = asyncio.Event()
        self.model = TopModel(BoardState())
        self.agent_rows = AgentSource(self.model)
        self.prompt_rows = PromptSource(self.model, stale)
        self.post_rows = PostSource()
        self._remote: dict[str, Presence] = {}
        self._remote_at = 0.0
        self._remote_due: Timer | None = None
        self._names_read = 0  # how many names the model knew when the agents were last read
        self._expiry: Timer | None = None
        self._expiry_at: float | None = None
        self._view: BoardView | None = None
        self._pending: list[tuple[int, Post]] = []
        self._flush_timer: Timer | None = None
        self._flushed_at = 0.0

    def compose(self) -> ComposeResult:
        yield Line(id="status")
        yield RowTable(self.agent_rows, id="agents")
        yield RowTable(self.prompt_rows, id="prompts")
        yield RowTable(self.post_rows, follow_end=True, id="posts")
        yield Line(Text("   ".join(KEY_HINTS)), id="keys")

    def table(self, name: str) -> RowTable:
        return self.query_one(f"#{name}", RowTable)

    async def on_mount(self) -> None:
        if self.own_process and sys.platform != "win32":  # asyncio has no signal handlers there
            # Textual leaves signals to the process: unhandled, SIGTERM would end it with the
            # terminal raw and on the alternate screen. Exiting the app restores both.
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                loop.add_signal_handler(sig, self.exit)
        self.install_screen(ThreadScreen(self._thread_text), name="thread")
        self.table("prompts").focus()
        self._titles()
        self.query_one("#status", Line).show(Text("reading the board…"))
        self.run_worker(self._follow(), name="follow")

    async def on_unmount(self) -> None:
        if self.own_process and sys.platform != "win32":
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                loop.remove_signal_handler(sig)
        if self._view is not None:
            self._view.__exit__()
            await anyio.to_thread.run_sync(self._view.store.close)

    # -- following the board -------------------------------------------------------------

    async def _follow(self) -> None:
        try:
            self.ctx.paths.ensure()
            # Lives on, as listeners; counts only verified posts, as `status` does.
            store = self.ctx.store(reconnect=True)
            self._view = view = BoardView(store, verdicts=verdicts_for(self.ctx))
            model = await anyio.to_thread.run_sync(self._catch_up, view)
            self._use(model)
            self.run_worker(self._watch_panes(), name="panes")
            self.loaded.set()
            while True:
                await view.wait_changed()
                changed = view.refresh()
                if FAILPOINT == "top-refresh":
                    raise RuntimeError("failpoint top-refresh: a failure no reader expects")
                self._take(changed)
        # Whatever stops the reading of the board (an unreadable log, a record no reader
        # expected) ends top with one line, never a traceback on the person's screen.
        except Exception as exc:  # noqa: BLE001
            self.error = exc
            self.exit(return_code=1)

    def _handle_exception(self, error: Exception) -> None:
        """Any other failure: Textual's own handling (leave the screen, exit code 1), without
        its traceback; `run_top` says it in one line (`--verbose` shows the traceback)."""
        if self.error is None:
            self.error = error
        super()._handle_exception(error)
        self._exit_renderables.clear()

    def _catch_up(self, view: BoardView) -> TopModel:
        """The whole board so far, folded and indexed (in a worker thread: it may be long)."""
        model = TopModel(view.state)
        model.take(view.refresh().posts, time.time())
        self._remote = who.remote_presences(self.ctx.store())
        return model

    def _use(self, model: TopModel) -> None:
        self.model = self.agent_rows.model = self.prompt_rows.model = self.post_rows.model = model
        self.post_rows.reset(model.shown_posts())
        self._read_agents()
        self._changed([], everything=True)
        self._expect_remote()
        if self.own_process:
            gc.freeze()  # the board read so far is kept: full collections no longer walk it

    def _take(self, changed: Refresh) -> None:
        assert self._view is not None
        now, posts = time.time(), changed.posts
        if changed.replaced:  # compacted: everything again from the start
            self.model.reset(self._view.state)
            self.model.take(posts, now)
            self.post_rows.reset(self.model.shown_posts())
        else:
            self.post_rows.extend(self.model.take(posts, now))
        shared = self._view.store.presence.shared  # listeners elsewhere
        remote = shared and now - self._remote_at > REMOTE_EVERY
        if remote or len(self.model.agents) != self._names_read:
            self.run_worker(self._refresh_agents(remote), group="agents", exclusive=True)
        self._pending += posts
        if self._flush_timer is None:
            wait = self._flushed_at + FRAME - time.monotonic()
            self._flush_timer = self.set_timer(max(0.001, wait), self._flushed)  # 0 divides by 0

    def _flushed(self) -> None:
        """Show what the posts since the last time changed (at most once a FRAME)."""
        self._flush_timer, self._flushed_at = None, time.monotonic()
        posts, self._pending = self._pending, []
        self._changed(posts)

    def _changed(self, posts: list[tuple[int, Post]], *, everything: bool = False) -> None:
        moved, changed = self.model.changed_rows()
        if everything:
            moved, changed = 0, []
        self.table("prompts").rows_changed(moved, changed)
        self.table("agents").rows_changed()
        self.table("posts").rows_changed()
        self._status()
        screen = self.screen
        if isinstance(screen, ThreadScreen):
            touched = {getattr(p, "prompt_id", p.id) for _, p in posts}
            key = self.model.thread_of.get(screen.pid)
            if any(self.model.thread_of.get(pid) == key for pid in touched):
                screen.redraw()
        self._schedule_expiry()

    def _schedule_expiry(self) -> None:
        when = self.model.next_expiry()
        if when is None or when == self._expiry_at:
            return
        if self._expiry is not None:
            self._expiry.stop()
        self._expiry_at = when
        self._expiry = self.set_timer(max(0.0, when - time.time()) + 0.01, self._expired)

    def _expired(self) -> None:
        self._expiry, self._expiry_at = None, None
        if self.model.expire(time.time()):
            self._changed([], everything=True)
        else:
            self._schedule_expiry()

    # -- agents --------------------------------------------------------------------------

    async def _watch_panes(self) -> None:
        watcher = FolderWatcher(self.ctx.paths.panes, (".lock", ".presence"))
        try:
            while True:
                await watcher.wait_changed()
                self._read_agents()
                self.table("agents").rows_changed()
                self._status()  # its counts of listening and asleep agents
                await anyio.sleep(0.05)  # a burst of pane writes is read once
        finally:
            watcher.close()

    async def _refresh_agents(self, remote: bool) -> None:
        if remote:
            self._remote_at = time.time()
            self._remote = await anyio.to_thread.run_sync(who.remote_presences, self.ctx.store())
            self._expect_remote()
        self._read_agents()
        self.table("agents").rows_changed()
        self._status()

    def _expect_remote(self) -> None:
        """While listeners elsewhere are shown, read their presence again when it could have
        expired: the store says nothing when a presence runs out (its time-to-live)."""
        ttl = self._view.store.presence.ttl if self._view else None
        if ttl and self._remote and self._remote_due is None:
            self._remote_due = self.set_timer(ttl, self._remote_expired)

    def _remote_expired(self) -> None:
        self._remote_due = None
        self.run_worker(self._refresh_agents(True), group="agents", exclusive=True)

    def _read_agents(self) -> None:
        self._names_read = len(self.model.agents)
        self.agent_rows.rows = who.rows(self.ctx.paths, self.model.agents, self._remote)
        self.model.rates = policy.rates(self.ctx, self.model.agents)  # what waits, and until when

    # -- what is shown -------------------------------------------------------------------

    def _titles(self) -> None:
        """The panes' titles: what each shows, and the filter (titles change with it alone)."""
        f = self.model.filter
        shown = [f"agent {f.agent}" if f.agent else "", f"thread {f.thread}" if f.thread else ""]
        where = fitted("  ·  ".join(s for s in shown if s))  # names from posts: text, no markup
        self.table("agents").border_title = "agents"
        opened = "prompts open, in delivery order"
        self.table("prompts").border_title = Text(f"{opened}  ·  {where}" if where else opened)
        self.table("posts").border_title = Text(f"posts  ·  {where}" if where else "posts")

    def _status(self) -> None:
        """The status line: where, who, and the counts (one line drawn again, not a pane)."""
        listening = sum(1 for row in self.agent_rows.rows if row.listening and not row.sleep)
        asleep = sum(1 for row in self.agent_rows.rows if row.listening and row.sleep)
        store = self._view.store.label if self._view is not None else "file log"
        text = Text(f" board {self.ctx.board}  ·  as {self.ctx.agent}  ·  {store}  │  ")
        text.append(f"agents {len(self.agent_rows)}, listening {listening}")
        text.append(f", asleep {asleep}  │  " if asleep else "  │  ")
        text.append(f"open prompts {len(self.model.rows)}", "bold")
        f = self.model.filter
        if f:
            text.append(f"  │  only agent {fitted(f.agent)}" if f.agent else "  │  only")
            text.append(f" thread {fitted(f.thread)}" if f.thread else "")
        self.query_one("#status", Line).show(text)

    def _filter(self, agent: str | None, thread: str | None) -> None:
        self.model.set_filter(agent, thread)
        self.post_rows.reset(self.model.shown_posts())
        self._titles()
        self._changed([], everything=True)

    def _selected_prompt(self) -> str | None:
        if isinstance(self.screen, ThreadScreen):
            return self.screen.pid
        key = self.table("prompts").selected()
        return key[2] if isinstance(key, tuple) else None

    # -- keys ----------------------------------------------------------------------------

    def on_row_table_chosen(self, event: RowTable.Chosen) -> None:
        """Enter: a prompt or a post opens its thread; an agent filters by it (or stops)."""
        if event.table.id == "prompts" and isinstance(event.key, tuple):
            self.open_thread(event.key[2])
        elif event.table.id == "posts" and isinstance(event.key, int):
            index = self.post_rows.find(event.key)
            post = None if index is None else self.post_rows.posts[index][1]
            pid = getattr(post, "prompt_id", None) or getattr(post, "id", None)
            if isinstance(pid, str) and pid in self.model.state.prompts:
                self.open_thread(pid)
        elif event.table.id == "agents" and isinstance(event.key, str):
            same = self.model.filter.agent == event.key
            self._filter(None if same else event.key, self.model.filter.thread)

    def open_thread(self, pid: str) -> None:
        screen = self.get_screen("thread", ThreadScreen)
        screen.show(pid)
        self.push_screen(screen)

    def _thread_text(self, pid: str) -> Text:
        return thread_text(self.model.thread(pid), self.model.state.prompts, time.time())

    def action_pick_agent(self) -> None:
        def chosen(name: str | None) -> None:
            if name is not None:
                self._filter(name or None, self.model.filter.thread)

        self.push_screen(AgentPicker(sorted(self.model.agents)), chosen)

    def action_thread_filter(self) -> None:
        if self.model.filter.thread is not None:
            self._filter(self.model.filter.agent, None)
            return
        pid = self._selected_prompt()
        if pid is not None:
            self._filter(self.model.filter.agent, self.model.thread_of.get(pid))

    def action_clear_filter(self) -> None:
        if self.model.filter:
            self._filter(None, None)

    def action_cancel_prompt(self) -> None:
        pid = self._selected_prompt()
        ps = None if pid is None else self.model.state.prompts.get(pid)
        if ps is None:
            self.notify("no prompt selected", severity="warning")
            return
        sender, me = ps.prompt.sender, self.ctx.agent
        if sender != me:
            said = f"only {fitted(sender)} can cancel this prompt; top runs as {me}"
            self.notify(said, severity="error", markup=False)
            return
        to = ", ".join(fitted(name) for name in ps.prompt.to)

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._cancel(ps.prompt.id), group="write")

        question = f"cancel prompt {fitted(ps.prompt.id)} to {to}?"
        self.push_screen(ConfirmScreen(question), answered)

    async def _cancel(self, pid: str) -> None:
        from paneboard.board.close import cancel

        try:
            await anyio.to_thread.run_sync(cancel, self.ctx, pid)
        except PaneboardError as exc:
            self.notify(fitted(str(exc), 400), severity="error", markup=False)
        else:
            self.notify(f"cancelled {fitted(pid)}", markup=False)

    def action_approve_prompt(self) -> None:
        """Ask about the selected prompt, held for top's agent, as `paneboard approve` does (the
        board read again: sender, key, why held, first lines); let it through on a yes."""
        ps = self._held_for_me(("held",))
        if ps is not None:
            pid = ps.prompt.id
            self._ask("approve", lambda: [decide.held_for(self.ctx, pid)], self._approve)

    def action_approve_sender(self) -> None:
        """Ask about every prompt held for top's agent from the selected prompt's sender, as
        `paneboard approve --from SENDER` does (count and reasons); let them through on a yes."""
        ps = self._held_for_me(OPEN_STAGES)
        if ps is not None:
            sender = ps.prompt.sender
            self._ask("approve", lambda: decide.held_from(self.ctx, sender), self._approve)

    def action_refuse_prompt(self) -> None:
        """Ask about the selected prompt, open for top's agent; end it for the agent on a yes."""
        ps = self._held_for_me(OPEN_STAGES)
        if ps is not None:
            pid = ps.prompt.id
            find = lambda: [decide.held_for(self.ctx, pid, OPEN_STAGES)]
            self._ask("refuse", find, self._refuse)

    def _held_for_me(self, stages: tuple[str, ...]) -> PromptState | None:
        """The selected prompt if top's agent may decide it (it is in *stages* for it)."""
        pid = self._selected_prompt()
        ps = None if pid is None else self.model.state.prompts.get(pid)
        if ps is None:
            self.notify("no prompt selected", severity="warning")
            return None
        me = self.ctx.agent
        if me not in ps.recipients:
            said = f"only its recipients decide this prompt; top runs as {me}"
            self.notify(said, severity="error", markup=False)
            return None
        now_stage = stage(ps, me, time.time())
        if now_stage not in stages:
            self.notify(f"the prompt is {now_stage} for {me}", severity="error", markup=False)
            return None
        return ps

    def _ask(
        self,
        verb: str,
        find: Callable[[], list[decide.OnHold]],
        act: Callable[[list[decide.OnHold]], Awaitable[None]],
    ) -> None:
        """Read what is decided (*find*, in a thread), ask about it, then *act* on a yes."""

        async def ask() -> None:
            try:
                held = await anyio.to_thread.run_sync(find)
            except PaneboardError as exc:
                self.notify(fitted(str(exc), 400), severity="error", markup=False)
                return
            shown = [decide.question(verb, held), *decide.question_lines(held), NOTE]

            def answered(yes: bool | None) -> None:
                if yes:
                    self.run_worker(act(held), group="write")

            self.push_screen(ConfirmScreen("\n".join(shown)), answered)

        self.run_worker(ask(), group="write")

    async def _approve(self, held: list[decide.OnHold]) -> None:
        ids = [h.prompt.id for h in held]
        done = f"approved {fitted(ids[0])}" if len(ids) == 1 else f"approved {len(ids)} prompts"
        await self._write(lambda: decide.approve_all(self.ctx, ids), done)

    async def _refuse(self, held: list[decide.OnHold]) -> None:
        pid = held[0].prompt.id
        why = "refused in paneboard top"
        await self._write(lambda: decide.refuse(self.ctx, pid, why), f"refused {fitted(pid)}")

    async def _write(self, write: Callable[[], object], done: str) -> None:
        try:
            await anyio.to_thread.run_sync(write)
        except PaneboardError as exc:
            self.notify(fitted(str(exc), 400), severity="error", markup=False)
        else:
            self.notify(done, markup=False)

    def action_post(self) -> None:
        f = self.model.filter

        def posted(pid: str | None) -> None:
            if pid is not None:
                self.notify(f"posted {pid}", markup=False)

        self.push_screen(PostScreen(self.ctx.agent, self._post, f.agent or ""), posted)

    async def _post(self, to: list[str], body: str, priority: str, thread: str | None) -> str:
        from paneboard.board.post import PromptRequest, append

        def write() -> str:
            return append(self.ctx, PromptRequest(to, body, priority=priority, thread=thread)).id

        return await anyio.to_thread.run_sync(write)
