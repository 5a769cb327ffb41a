"""A pane's own files: its lock, the delivered keys, the checkpoint of its fold, the presence
record, and its agent's conversation file (the transcript).
"""
