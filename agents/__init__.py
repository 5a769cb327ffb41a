"""One module per agent (Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode, …): its hook
files, its hook input, its door and admission check, its `seen` source, its doctor checks."""
