"""Hypothesis strategies for posts, kept in one place."""

from __future__ import annotations

import string

from hypothesis import strategies as st

from paneboard.protocol.posts import (
    Ack,
    Answer,
    Approved,
    Cancel,
    Delivered,
    Held,
    Post,
    Prompt,
    Refused,
    Seen,
    Undelivered,
)

NAME_CHARS = string.ascii_letters + string.digits + "._-"
names = st.text(NAME_CHARS, min_size=1, max_size=64).filter(lambda s: not s.startswith("."))
ids = st.text("0123456789abcdefghjkmnpqrstvwxyz", min_size=26, max_size=26)
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=300)
bodies = texts.filter(bool)
stamps = st.floats(min_value=0, max_value=4e9, allow_nan=False)
priorities = st.sampled_from(["low", "normal", "high", "urgent"])


def _header() -> dict[str, st.SearchStrategy[object]]:
    return {"id": ids, "board": names, "sender": names, "ts": stamps}


prompts = st.builds(
    Prompt,
    **_header(),
    to=st.lists(names, min_size=1, max_size=4).map(tuple),
    body=bodies,
    priority=priorities,
    thread=st.none() | names,
    reply_to=st.none() | ids,
    expires=st.none() | stamps,
)
posts: st.SearchStrategy[Post] = st.one_of(
    prompts,
    st.builds(Ack, **_header(), prompt_id=ids, note=st.none() | texts),
    st.builds(Answer, **_header(), prompt_id=ids, body=bodies),
    st.builds(Cancel, **_header(), prompt_id=ids),
    st.builds(
        Delivered,
        **_header(),
        prompt_id=ids,
        door=names,
        outcome=st.sampled_from(["accepted", "unknown"]),
    ),
    st.builds(Undelivered, **_header(), prompt_id=ids, door=names, reason=texts),
    st.builds(Seen, **_header(), prompt_id=ids, door=names, source=names),
    st.builds(
        Held,
        **_header(),
        prompt_id=ids,
        door=names,
        by=st.sampled_from(["agent", "policy"]),
        reason=texts,
    ),
    st.builds(Approved, **_header(), prompt_id=ids),
    st.builds(Refused, **_header(), prompt_id=ids, reason=texts),
)
