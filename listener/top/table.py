"""A table of rows drawn one screen line at a time (Textual's line API).

Only the rows on screen are ever drawn, so a table of 10,000 prompts costs what a table of
forty does. The rows live in a `RowSource` owned by the app; the table keeps a cursor on a
row's key, so rows coming and going above it do not move the selection. Ages and stale
marks change with time: the table asks its source when the next shown row will read
differently, and draws again then (one timer, none while nothing on screen can change).
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from typing import ClassVar, Protocol

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer


class RowSource(Protocol):
    def __len__(self) -> int: ...

    def key(self, index: int) -> Hashable: ...

    def find(self, key: Hashable) -> int | None: ...

    def line(self, index: int, now: float) -> Text: ...

    def changes_at(self, index: int, now: float) -> float | None:
        """When row *index* will next read differently by itself (an age ticking), if ever."""
        ...


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
        self._tick: Timer | None = None
        self._tick_at = 0.0

    # -- rows changed --------------------------------------------------------------------

    def rows_changed(self) -> None:
        """The source changed: keep the cursor on its row, resize, draw again."""
        n = len(self.source)
        at_end = self.follow_end and (self.cursor_key is None or self.cursor >= self._rows - 1)
        self._rows = n
        found = None if self.cursor_key is None or at_end else self.source.find(self.cursor_key)
        wanted = n - 1 if at_end else self.cursor if found is None else found
        self.cursor = max(0, min(n - 1, wanted))
        self.cursor_key = self.source.key(self.cursor) if n else None
        if self.virtual_size.height != n:
            self.virtual_size = Size(self.size.width, n)
        self._show_cursor()
        self.refresh()

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
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = round(self.scroll_y) + y
        if index >= len(self.source):
            return Strip.blank(width, base)
        text = self.source.line(index, time.time())
        cursor = index == self.cursor
        text.style = base + self.get_component_rich_style("row-table--cursor") if cursor else base
        text.truncate(width, overflow="ellipsis", pad=True)
        return Strip(list(text.render(self.app.console)), width).crop_extend(0, width, base)

    def render_lines(self, crop: Region) -> list[Strip]:
        strips = super().render_lines(crop)
        self._schedule_tick()
        return strips

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
