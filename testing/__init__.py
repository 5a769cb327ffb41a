"""The real counterparts the tests and the benchmarks meet, shared by both (`tests/` holds the
tests and their fixtures; `bench/` imports this package, never `tests/`).

- `helpers`: the command line and a listener as real processes, Unix socket and script servers
  standing in for an agent, a real `nats-server`, a detached tmux, bounded waits;
- `natscluster`: three `nats-server`s forming one JetStream cluster;
- `clients`: the pinned agent CLIs (the one list is `clients.txt`, beside it), where they are
  installed, and Claude Code and Codex sessions of them;
- `sessions`: live sessions of the other agent CLIs in tmux (`pi_session`, `qwen_session`,
  `kilo_session`, … for one agent each);
- `stand_in`, `api_stand_in`, `model_stand_in`: loopback stand-ins of the agents' model APIs.

Not installed: the wheel holds paneboard's packages only (setup.py).
"""
