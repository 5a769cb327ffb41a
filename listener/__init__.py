"""The listener: `paneboard listen` (listen.py), what it reads of the board (view.py), what it
learns of the agent's transcript (seen.py), and the doors it hands prompts through (doors/)."""
