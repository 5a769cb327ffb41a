"""The board's operations, shared by every front end: the context a command resolves, and (as
they move here) post, close, read, wait, who and compact, each returning typed results."""
