"""Agent integration: hook files (Claude Code, Codex, Gemini CLI, Copilot CLI), the OpenCode
plugin, and the hooks they run."""
