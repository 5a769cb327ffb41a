"""Agent integration: hook files for Claude Code and Codex, and the hooks they run."""

from __future__ import annotations

__all__: list[str] = []
