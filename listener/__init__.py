"""The running process: the listener (`listen`), the doors, the context; the hooks and the CLI.

`paneboard.listener` itself holds the listener and the context every command resolves; `hooks/`
what agents' hooks run; `cli/` the parser and one module per group of commands; `top/` the live
view. tests/test_layering.py keeps their imports going one way.
"""
