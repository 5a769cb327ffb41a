"""`top`'s other screens: a prompt's whole thread, the agent picker, posting, confirming."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from paneboard.protocol.errors import PaneboardError
from paneboard.protocol.posts import Answer, Post, Prompt
from paneboard.protocol.visible import visible
from paneboard.state.fold import PromptState, stage
from paneboard.top.model import not_counted
from paneboard.top.rows import STAGE_STYLE, fitted, post_text, time_of_day
from paneboard.top.table import Line


def thread_text(
    posts: Sequence[tuple[int, Post]],
    prompts: dict[str, PromptState],
    now: float,
) -> Text:
    """Each prompt of a thread with its body and stages, then every post about it, in order
    (one the fold did not count marked so)."""
    text = Text()
    for _, post in posts:
        if isinstance(post, Prompt):
            text.append(f"\n{time_of_day(post.ts)}  prompt {fitted(post.id)}\n", "bold")
            to = ", ".join(fitted(name) for name in post.to)
            text.append(f"  from {fitted(post.sender)} to {to}, priority {post.priority}")
            text.append(f", thread {fitted(post.thread)}" if post.thread else "")
            text.append(f", reply to {fitted(post.reply_to)}" if post.reply_to else "")
            text.append("\n")
            ps = prompts.get(post.id)
            if ps is not None:
                for name in ps.recipients:
                    s = stage(ps, name, now)
                    text.append(f"  {fitted(name)}: ").append(s, STAGE_STYLE.get(s, ""))
                    text.append("\n")
            text.append(_indent(post.body) + "\n", "italic")
        elif isinstance(post, Answer):
            text.append_text(post_text(post, not_counted(post, prompts))).append("\n")
            text.append(_indent(post.body) + "\n", "dim" if not_counted(post, prompts) else "green")
        else:
            text.append_text(post_text(post, not_counted(post, prompts))).append("\n")
    return text


def _indent(body: str) -> str:
    return "\n".join(f"  │ {visible(line)}" for line in body.splitlines() or [""])


class ThreadScreen(Screen[None]):
    """A prompt's thread: every prompt in it, its body, receipts, acks and answers.

    One screen, installed once and shown again for each prompt (`show`): a screen built per
    visit costs its widgets' styling every time.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "back"),
        Binding("c", "app.cancel_prompt", "cancel prompt"),
    ]
    KEYS = "esc or q back   c cancel this prompt (if you sent it)   ↑ ↓ pgup pgdn scroll"

    def __init__(self, render: Callable[[str], Text]) -> None:
        super().__init__()
        self.pid = ""
        self._draw = render

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="thread-scroll"):
            yield Static(id="thread")
        yield Line(Text(self.KEYS), id="thread-keys")

    def on_mount(self) -> None:
        self.redraw()

    def show(self, pid: str) -> None:
        self.pid = pid
        if self.is_mounted:
            self.redraw()
            self.query_one("#thread-scroll", VerticalScroll).scroll_home(animate=False)

    def redraw(self) -> None:
        title = Text(f"thread of prompt {fitted(self.pid)}")  # text, never markup
        self.query_one("#thread-scroll").border_title = title
        self.query_one("#thread", Static).update(self._draw(self.pid))


class AgentPicker(ModalScreen[str | None]):
    """Choose an agent to filter by ("" for every agent)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "back")]

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__()
        self.names = list(names)

    def compose(self) -> ComposeResult:
        options = [Option(Text("every agent"), id="")]
        options += [Option(Text(fitted(n)), id=f"a{i}") for i, n in enumerate(self.names)]
        with Vertical(id="picker"):
            yield Label("show prompts and posts of")
            yield OptionList(*options, id="agents-list", markup=False)

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        self.dismiss(self.names[int(oid[1:])] if oid else "")


class ConfirmScreen(ModalScreen[bool]):
    """A question answered with y or n."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "dismiss(True)", "yes"),
        Binding("n,escape", "dismiss(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(Text(self.question))
            yield Label("y: yes   n: no")


PostFn = Callable[[list[str], str, str, str | None], Awaitable[str]]


class PostScreen(ModalScreen[str | None]):
    """A prompt to post: recipients, priority, thread, body. Enter posts it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "back")]

    def __init__(self, sender: str, post: PostFn, to: str = "") -> None:
        super().__init__()
        self.sender = sender
        self.post = post
        self.to = to

    def compose(self) -> ComposeResult:
        with Vertical(id="post"):
            yield Label(Text(f"post a prompt as {self.sender}  (enter posts, escape goes back)"))
            with Horizontal(classes="post-row"):
                yield Input(self.to, placeholder="to: agent, agent…", id="post-to")
                yield Select(
                    [(p, p) for p in ("low", "normal", "high", "urgent")],
                    value="normal",
                    allow_blank=False,
                    id="post-priority",
                )
                yield Input(placeholder="thread (optional)", id="post-thread")
            yield Input(placeholder="the prompt", id="post-body")
            yield Label("", id="post-error")

    def on_mount(self) -> None:
        self.query_one("#post-body" if self.to else "#post-to", Input).focus()

    @on(Input.Submitted)
    async def submit(self) -> None:
        to = self.query_one("#post-to", Input).value.replace(",", " ").split()
        body = self.query_one("#post-body", Input).value
        thread = self.query_one("#post-thread", Input).value.strip() or None
        priority = str(self.query_one("#post-priority", Select).value)
        error = self.query_one("#post-error", Label)
        if not to:
            error.update("name at least one recipient")
            return
        if not body.strip():
            error.update("the prompt is empty")
            return
        try:
            pid = await self.post(to, body, priority, thread)
        except PaneboardError as exc:  # the one-line refusal, shown where it was typed
            error.update(Text(fitted(str(exc), 400)))
            return
        self.dismiss(pid)
