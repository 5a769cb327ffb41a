"""Delivering: one deliverer (deliverer.py) for a pane, its fold, its policy and its door; the
listener's loop around it (`paneboard listen`, listen.py), the Stop-hook door's pass around it
(stop.py), what it learns of the agent's transcript (seen.py), and the doors it hands prompts
through (doors/). It reads the board through `board.view`."""
