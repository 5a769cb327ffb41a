"""What the board lives in, by concern: the file log (`filelog/`), NATS JetStream (`nats/`), a
pane's own files (`panes/`), trust (`trust/`: keys, seals, verdicts, policy); and, flat, what
they share: the store interface (`abc`), the fold, the limit, paths and the home folder, files,
processes, the one file watcher.

Import the module that holds a name (`paneboard.state.filelog.log`, …).
"""
