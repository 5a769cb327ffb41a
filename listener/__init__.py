"""The listener: `paneboard listen` (listen.py), what it learns of the agent's transcript
(seen.py), and the doors it hands prompts through (doors/). It reads the board through
`board.view`."""
