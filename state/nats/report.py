"""What JetStream says of a board's stream, for `doctor`: its replicas, leader and lags."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Peer", "StreamReport", "stream_report"]


class Peer(NamedTuple):
    name: str
    current: bool
    offline: bool
    lag: int


class StreamReport(NamedTuple):
    """What JetStream says of a board's stream, for `doctor`."""

    stream: str
    replicas: int  # as the stream was created
    wanted: int  # as the address asks
    cluster: str  # "" on a single server
    leader: str
    peers: tuple[Peer, ...]  # the replicas other than the leader
    messages: int

    @property
    def healthy(self) -> bool:
        peers_ok = all(p.current and not p.offline for p in self.peers)
        return self.replicas >= self.wanted and peers_ok and (self.leader != "" or not self.cluster)

    def text(self) -> str:
        asked = f" (the address asks for {self.wanted})" if self.replicas != self.wanted else ""
        where = "one server"
        if self.cluster:
            where = f"cluster `{self.cluster}`, leader {self.leader or 'none'}"
        peers = "".join(f"; {p.name} {_peer_state(p)}" for p in self.peers)
        return f"{self.stream}: {self.replicas} replica(s){asked}, {where}{peers}"


def _peer_state(peer: Peer) -> str:
    if peer.offline:
        return "offline"
    return f"lag {peer.lag}" + ("" if peer.current else " (catching up)")


def stream_report(info: Any, wanted: int) -> StreamReport:
    """The report of a stream's *info* (nats-py's `StreamInfo`); *wanted*: the address's
    replicas."""
    cluster = info.cluster
    peers = tuple(
        Peer(p.name or "?", bool(p.current), bool(p.offline), int(p.lag or 0))
        for p in (cluster.replicas or [] if cluster else [])
    )
    return StreamReport(
        stream=str(info.config.name),
        replicas=int(info.config.num_replicas or 1),
        wanted=wanted,
        cluster=(cluster.name or "") if cluster else "",
        leader=(cluster.leader or "") if cluster else "",
        peers=peers,
        messages=int(info.state.messages),
    )
