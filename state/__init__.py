"""What the board lives in: the stores (the file log, NATS JetStream), the fold of posts into
board state, paths and the home folder, the pane lock, delivered keys, checkpoints.

Import the module that holds a name (`paneboard.state.filelog.log`, …).
"""
