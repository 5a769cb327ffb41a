"""A pane's own files: its lock, the delivered keys, the checkpoint of its fold, the presence
record, its agent's conversation file (the transcript), the wakes of its asleep listener, and
the session `spawn` started for it.
"""
