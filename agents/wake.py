"""The wake doors of the agents whose CLI resumes a session headless: a `WakeRequest` made into
the `ResumeDoor` (listener/doors/resume.py) that runs the agent's own resume command."""

from __future__ import annotations

from collections.abc import Sequence

from paneboard.agents.base import WakeRequest
from paneboard.listener.doors.resume import Mark, Resume, ResumeDoor


def resume_door(
    request: WakeRequest,
    name: str,
    title: str,
    argv: Sequence[str],
    marks: Sequence[Mark],
    prompt_flag: str = "",
) -> ResumeDoor:
    """The door that runs *argv* (the text on its input, or as *prompt_flag* ``=TEXT``) in the
    ended session's project, with its listener's environment; ``accepted`` once the agent's
    events match *marks*, in order."""
    return ResumeDoor(
        Resume(
            name=name,
            title=title,
            session=request.session,
            argv=argv,
            marks=marks,
            project=request.project,
            env=request.env,
            home=request.home,
            timeout=request.timeout,
            prompt_flag=prompt_flag,
        )
    )
