"""Text from the board made safe to show: the one place control and format characters are
turned into visible escapes.

A value read from a store can hold anything its sender wrote. Shown raw, a control character
moves a terminal's cursor, retitles or clears it; a bidirectional control reorders what is
read; a line or paragraph separator starts a new line for some renderers; a zero-width or
other format character hides text. `visible` writes each of them as a Python-style escape
(``\\x1b``, ``\\u202e``, ``\\U000e0041``), so what is shown is what was sent, one character
for one escape. A lone surrogate (a string decoded with ``surrogateescape``) is shown the
same way and never reaches an encoder.
"""

from __future__ import annotations

# Unicode categories never shown raw: controls (C0, DEL, C1 with U+0085), format characters
# (bidirectional controls, zero-width characters, tags, the byte order mark), surrogates,
# and the line and paragraph separators.
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def visible(text: str, *, keep: str = "\n\t") -> str:
    """*text* with every control or format character, but those in *keep*, made an escape.

    With ``keep=""`` the result is one line: newlines and tabs are escaped too.
    """
    if text.isprintable():
        return text  # the common case (no control, format or separator character at all)
    import unicodedata  # here: `paneboard post` does not pay for its import

    return "".join(
        ch if ch in keep or unicodedata.category(ch) not in HIDDEN else _escape(ch) for ch in text
    )


def one_line(text: str) -> str:
    """*text* as one line: `visible` with newlines and tabs escaped as well."""
    return visible(text, keep="")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
