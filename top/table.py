"""A table of rows drawn one screen line at a time (Textual's line API).

Only the rows on screen are ever drawn, so a table of 10,000 prompts costs what a table of
forty does. The rows live in a `RowSource` owned by the app; the table keeps a cursor on a
row's key, so rows coming and going above it do not move the selection. Ages and stale
marks change with time: the table asks its source when the next shown row will read
differently, and draws again then (one timer, none while nothing on screen can change).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable
from typing import ClassVar, Protocol

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget


class RowSource(Protocol):
    def __len__(self) -> int: ...

    def key(self, index: int) -> Hashable: ...

    def find(self, key: Hashable) -> int | None: ...

    def line(self, index: int, now: float) -> Text: ...

    def stamp(self, index: int, now: float) -> Hashable | None:
        """A key for row *index*, the same while its text is (None: draw it each time)."""
        ...

    def changes_at(self, index: int, now: float) -> float | None:
        """When row *index* will next read differently by itself (an age ticking), if ever."""
        ...


class Line(Widget):
    """One line of text, drawn again only when it reads differently."""

    DEFAULT_CSS = "Line { height: 1; }"

    def __init__(self, text: Text | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = text or Text()

    def show(self, text: Text) -> None:
        if text.plain != self.text.plain:
            self.text = text
            self.refresh()

    def render(self) -> Text:
        return self.text


class RowTable(ScrollView, can_focus=True):
    """Rows from a `RowSource`, a cursor, and `Chosen` when enter is pressed on a row."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "up", show=False),
        Binding("down,j", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "move(-1000000000)", "first", show=False),
        Binding("end", "move(1000000000)", "last", show=False),
        Binding("enter", "choose", "open", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-table--cursor"}
    DEFAULT_CSS = """
    RowTable { height: 1fr; overflow-x: hidden; }
    RowTable > .row-table--cursor { background: $surface-lighten-2; }
    RowTable:focus > .row-table--cursor { background: $block-cursor-background; }
    """

    class Chosen(Message):
        """Enter on a row."""

        def __init__(self, table: RowTable, key: Hashable) -> None:
            super().__init__()
            self.table = table
            self.key = key

    def __init__(
        self,
        source: RowSource,
        *,
        follow_end: bool = False,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.source = source
        self.follow_end = follow_end  # stay on the last row while it is selected (a log)
        self.cursor = 0
        self.cursor_key: Hashable | None = None
        self._rows = 0  # how many rows there were at the last change
        self._strips: dict[tuple[Hashable, int], Strip] = {}  # drawn rows, by what they show
        self._pass = (0, Style())
        self._tick: Timer | None = None
        self._tick_at = 0.0

    # -- rows changed --------------------------------------------------------------------

    def rows_changed(self, moved_from: int | None = 0, changed: Iterable[int] = ()) -> None:
        """The source changed: keep the cursor on its row, resize, draw again what changed.

        *moved_from* is the first row that may have moved (rows were added or removed there),
        None if none did; *changed* are rows whose text changed in place. By default,
        everything is drawn again.
        """
        n = len(self.source)
        at_end = self.follow_end and (self.cursor_key is None or self.cursor >= self._rows - 1)
        self._rows = n
        found = None if self.cursor_key is None or at_end else self.source.find(self.cursor_key)
        wanted = n - 1 if at_end else self.cursor if found is None else found
        old, self.cursor = self.cursor, max(0, min(n - 1, wanted))
        self.cursor_key = self.source.key(self.cursor) if n else None
        self._resize(exact=False)
        top = round(self.scroll_y)
        self._show_cursor()
        if round(self.scroll_y) != top:
            return  # scrolled: everything is drawn again
        bottom = top + self.scrollable_content_region.height
        if moved_from is not None and moved_from < bottom:
            start = max(top, moved_from)
            self.refresh_lines(start, bottom - start)
        for index in {*changed, old, self.cursor}:
            if top <= index < bottom:
                self.refresh_line(index)

    def _resize(self, *, exact: bool) -> None:
        """Tell Textual how many rows there are: a layout of the whole screen, so under a
        stream of posts only when the count moved by a hundredth, or where it is small enough
        to see (the scroll bar), or when a key moves the cursor (*exact*)."""
        n, shown = len(self.source), self.virtual_size.height
        small = min(n, shown) <= 4 * max(1, self.scrollable_content_region.height)
        if n != shown and (exact or small or abs(n - shown) * 100 >= shown):
            self.virtual_size = Size(self.size.width, n)
            self.call_after_refresh(self._show_cursor)  # scrolling waits for the new size

    def on_resize(self) -> None:
        self._show_cursor()  # the first change may come before the table has a height

    def selected(self) -> Hashable | None:
        return self.cursor_key if len(self.source) else None

    # -- keys ----------------------------------------------------------------------------

    def action_move(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_choose(self) -> None:
        key = self.selected()
        if key is not None:
            self.post_message(self.Chosen(self, key))

    def _move_to(self, index: int) -> None:
        self._resize(exact=True)
        n = len(self.source)
        if not n:
            return
        old = self.cursor
        self.cursor = max(0, min(n - 1, index))
        self.cursor_key = self.source.key(self.cursor)
        self._show_cursor()
        self.refresh_line(old)
        self.refresh_line(self.cursor)

    def _show_cursor(self) -> None:
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    # -- drawing -------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width, base = self._pass
        index = round(self.scroll_y) + y
        if index >= len(self.source):
            return Strip.blank(width, base)
        cursor, now = index == self.cursor, time.time()
        stamp = None if cursor else self.source.stamp(index, now)
        if stamp is not None and (stamp, width) in self._strips:
            return self._strips[stamp, width]
        text = self.source.line(index, now)
        text.truncate(width, overflow="ellipsis", pad=True)
        # As a span, not `text.style`: rich draws a text without spans in no style at all.
        text.stylize_before(
            base + self.get_component_rich_style("row-table--cursor") if cursor else base
        )
        strip = Strip(list(text.render(self.app.console)), width).crop_extend(0, width, base)
        if stamp is not None:
            if len(self._strips) >= 512:
                self._strips.clear()
            self._strips[stamp, width] = strip
        return strip

    def render_lines(self, crop: Region) -> list[Strip]:
        self._pass = (self.scrollable_content_region.width, self.rich_style)  # once, not per line
        strips = super().render_lines(crop)
        self._schedule_tick()
        return strips

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def _schedule_tick(self) -> None:
        """A timer for the next time a row on screen reads differently by itself."""
        now = time.time()
        top = round(self.scroll_y)
        rows = range(top, min(len(self.source), top + self.scrollable_content_region.height))
        times = [t for t in (self.source.changes_at(i, now) for i in rows) if t is not None]
        when = min(times, default=None)
        if when is None or (self._tick is not None and self._tick_at == when):
            return
        if self._tick is not None:
            self._tick.stop()
        self._tick_at = when
        self._tick = self.set_timer(max(0.0, when - now) + 0.01, self._ticked)

    def _ticked(self) -> None:
        self._tick = None
        self.refresh()
