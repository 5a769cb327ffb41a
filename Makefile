# Two commands do everything on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

# The installed packages: every top-level folder holding an __init__.py (see setup.py).
PACKAGES := $(filter-out tests testing bench,$(patsubst %/__init__.py,%,$(wildcard */__init__.py)))

.PHONY: compile demo test lint bench bench-quick wheel-check screenshot

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,nats,tui,mcp]' --config-settings editable_mode=strict
	touch $@

# Compiled bytecode, as a normal install has it (PYTHONDONTWRITEBYTECODE would otherwise
# make every `paneboard` run compile its modules again). The strict editable install imports
# the modules through the links of build/__editable__*, whose own __pycache__ is the one used.
# A module added since the install has no link there yet: install again.
compile: $(BIN)/.installed
	@for f in $$(find $(filter-out root,$(PACKAGES)) -name '*.py' -o -name '*.js'); do \
	  [ -e build/__editable__.paneboard-*/paneboard/$$f ] || \
	  { rm -f $(BIN)/.installed; $(MAKE) -s $(BIN)/.installed; break; }; done
	@$(BIN)/python -m compileall -q $(PACKAGES) build/__editable__*

demo: compile
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# docs/top.svg, the README's picture of `paneboard top`, from a demo board with real listeners.
screenshot: compile
	$(BIN)/python scripts/top_screenshot.py docs/top.svg

test: compile
	$(BIN)/python -m pytest

lint: $(BIN)/.installed
	$(BIN)/ruff check $(PACKAGES) tests testing bench setup.py
	$(BIN)/ruff format --check $(PACKAGES) tests testing bench setup.py
	$(BIN)/mypy

bench: compile
	$(BIN)/pip install -q -e '.[dev,nats,tui,mcp,bench]' --config-settings editable_mode=strict
	$(BIN)/python -m bench

bench-quick: compile
	$(BIN)/python -m bench --quick

# The wheel as users install it, in a fresh venv outside the checkout (also run by .ci/run).
wheel-check:
	bash scripts/wheel-check.sh
