"""For the fault-injection suite: a process SIGKILLs itself on reaching the point it names.

``PANEBOARD_FAILPOINT=after-record`` kills a deliverer between the delivered key and its
receipt, say; unset, every point is a no-op.
"""

from __future__ import annotations

import os
import signal


def failpoint(name: str) -> None:
    if os.environ.get("PANEBOARD_FAILPOINT", "") == name:
        os.kill(os.getpid(), signal.SIGKILL)
