"""The file log, the embedded store: a board's log file, its framing, appends, readers and
followers, compaction and the per-sender tally the limit reads.
"""
