"""Agent integration: hook files (Claude Code, Codex, Gemini CLI, Copilot CLI), the OpenCode
plugin, and the hooks they run."""

from __future__ import annotations

__all__: list[str] = []
