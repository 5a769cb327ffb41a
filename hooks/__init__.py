"""What the agents' hooks run: session start and end (`session`), the Stop hook (`stop`, the
agent's values for the Stop-hook door in `paneboard.listener.stop`).

What differs per agent (its hook file, its door, its replies) is its record in
`paneboard.agents`; these modules ask it.
"""
