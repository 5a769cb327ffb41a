"""Signing where every writer passes (the context's store), and one home's verdicts on records."""

from __future__ import annotations

from pathlib import Path

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Ack, Delivered, Post, encode
from paneboard.protocol.signing import fingerprint, signed_part
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.store import FileStore
from paneboard.state.fold import BoardState, fold_checked
from paneboard.state.trust.keys import Pins, open_key
from paneboard.state.trust.sealing import Sealer
from paneboard.state.trust.verdicts import Verdicts, checked, read_checked
from testing.helpers import package_modules
from tests.factories import prompt


def _records(folder: Path) -> list[tuple[int, Post, bytes]]:
    follower = FileStore(folder).follow(0)
    try:
        return [record for batch in follower.records() for record in batch]
    finally:
        follower.close()


def test_a_contexts_store_seals_both_appends_on_every_store(home: Path, store_url: str) -> None:
    """On the file log and on NATS, a post appended as a Struct and one appended encoded (the
    way `paneboard post` appends) are both stored signed by the sender's key, and verify."""
    with Context.resolve(str(home), "b", "alice", store=store_url) as ctx:
        ctx.paths.ensure()
        store = ctx.store()
        store.append([prompt(1, board="b")])
        store.append_encoded([encode(prompt(2, board="b"))])
        follower = store.follow(0)
        try:
            stored = [record for batch in follower.records() for record in batch]
        finally:
            follower.close()
    alice = open_key(home, "alice").public
    verdicts = Verdicts(home / "b")
    assert [(alice, "verified"), (alice, "verified")] == [
        (getattr(signed_part(raw), "key", None), verdicts.verdict(p.sender, raw))
        for _, p, raw in stored
    ]


def test_no_store_is_opened_but_with_a_sealer_and_none_appends_around_it() -> None:
    """`open_store` asks every caller for a sealer (no default); the package opens a store only
    there (the stores' classes are built in state/stores.py alone, and every call of
    `open_store` names its sealer); and neither store appends but through `SealingAppends`."""
    import ast
    import inspect

    from paneboard.state.nats.store import NatsStore
    from paneboard.state.stores import open_store
    from paneboard.state.trust.sealing import SealingAppends

    assert inspect.Parameter.empty == inspect.signature(open_store).parameters["sealer"].default
    built, opened = set(), []
    for where, path in package_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
                name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                if name in ("FileStore", "NatsStore"):
                    built.add(where)
                elif name == "open_store":
                    opened.append((where, "sealer" in {k.arg for k in node.keywords}))
    assert ({"state/stores.py"}, [("board/context.py", True)]) == (built, opened)
    for store in (FileStore, NatsStore):
        assert (SealingAppends.append, SealingAppends.append_encoded) == (
            store.append,
            store.append_encoded,
        )


def test_every_post_written_through_a_context_is_signed_by_its_senders_key(home: Path) -> None:
    """The bytes stored end with the sender's key and a signature that verifies."""
    with Context.resolve(str(home), "b", "alice") as ctx:
        ctx.paths.ensure()
        ctx.store().append([prompt(1, board="b")])
        ctx.store().append([Ack(**header("b", "bob"), prompt_id=prompt(1).id)])
    stored = _records(home / "b")
    keys = [signed_part(payload) for _, _, payload in stored]
    assert [open_key(home, "alice").public, open_key(home, "bob").public] == [
        k.key if k else None for k in keys
    ]
    verdicts = Verdicts(home / "b")
    assert ["verified", "verified"] == [verdicts.verdict(p.sender, raw) for _, p, raw in stored]


def test_an_old_unsigned_log_is_read_and_its_posts_are_unsigned(home: Path) -> None:
    """Records written before signing decode as before; their verdict is `unsigned`."""
    (home / "b").mkdir()
    append_payloads(home / "b" / "log", [encode(prompt(1, board="b"))])
    [(_, post, raw)] = _records(home / "b")
    assert (prompt(1, board="b"), "unsigned") == (post, Verdicts(home / "b").verdict("alice", raw))


def test_the_first_key_is_pinned_and_another_is_forged(home: Path, tmp_path: Path) -> None:
    """A home pins the first verified key of a name it does not own; another key is forged."""
    folder = home / "b"
    folder.mkdir()
    laptop, other = tmp_path / "laptop", tmp_path / "other"
    laptop.mkdir(mode=0o700)
    other.mkdir(mode=0o700)
    first = Sealer(laptop, "alice").seal(encode(prompt(1, board="b")))
    second = Sealer(other, "alice").seal(encode(prompt(2, board="b")))
    verdicts = Verdicts(folder)
    assert ["verified", "forged"] == [
        verdicts.verdict("alice", first),
        verdicts.verdict("alice", second),
    ]
    assert {"alice": open_key(laptop, "alice").fingerprint} == Pins(folder).read()
    bent = first[:-1] + bytes([first[-1] ^ 1])
    assert "forged" == Verdicts(folder).verdict("alice", bent)


def test_a_catch_up_verifies_only_the_posts_that_move_the_prompts_it_keeps(home: Path) -> None:
    """A listener's fold for bob over a board of others' closed prompts checks no signature
    of theirs: only the receipt that moves bob's own prompt."""
    folder = home / "b"
    folder.mkdir()
    alice, carol = Sealer(home, "alice"), Sealer(home, "carol")
    payloads = []
    for i in range(200):
        p = prompt(i, board="b", to=("carol",))
        ack = Ack(id=f"a{i:025d}", board="b", sender="carol", ts=1.0, prompt_id=p.id)
        payloads += [alice.seal(encode(p)), carol.seal(encode(ack))]
    mine = prompt(999, board="b", to=("bob",))
    receipt = Delivered(
        id="d" * 26, board="b", sender="bob", ts=2.0, prompt_id=mine.id, door="exec"
    )
    payloads += [alice.seal(encode(mine)), Sealer(home, "bob").seal(encode(receipt))]
    append_payloads(folder / "log", payloads)
    verdicts = Verdicts(folder)
    state = fold_checked(read_checked(FileStore(folder), verdicts), BoardState(recipient="bob"))
    assert ("delivered", 1) == (state.prompts[mine.id].recipients["bob"].stage, verdicts.verified)
    assert list(state.prompts) == [mine.id]
    assert (402, 1) == (len(list(checked(verdicts, [_records(folder)]))), verdicts.verified)
    assert fingerprint(open_key(home, "bob").public) == verdicts.pinned()["bob"]  # its own key
    assert not (folder / "pins").exists()


def test_the_provenance_a_door_composes_names_the_verified_key(home: Path, tmp_path: Path) -> None:
    """Verified: the sender's fingerprint; forged: none; approval carried as given."""
    folder = home / "b"
    folder.mkdir()
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    p = prompt(1, board="b")
    verdicts = Verdicts(folder)
    mine = verdicts.provenance(p, Sealer(home, "alice").seal(encode(p)), approved=True)
    theirs = verdicts.provenance(p, Sealer(other, "alice").seal(encode(p)))
    assert ("verified", open_key(home, "alice").fingerprint, True) == (
        mine.verdict,
        mine.fingerprint,
        mine.approved,
    )
    assert ("forged", None, False) == (theirs.verdict, theirs.fingerprint, theirs.approved)
