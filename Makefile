# Two commands do everything on a fresh clone: `make demo` and `make test`. A developer runs
# `make check` after each change: the fast tier (docs/developers.md, "Which tests to run").
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

# The installed folders, as setup.py finds them (the one list), and `root/` (the package itself).
PACKAGES = $(shell $(PYTHON) -c 'import setup; print(*setup.TOPS)') root
# The agent CLIs the tests meet, pinned in one list, installed by `make clients` into .ci/tools.
CLIENTS_LIST := testing/clients.txt
TOOLS := .ci/tools

# pytest keeps the test modules it rewrites (its assertions) in __pycache__, and so does every
# process the tests start, unless PYTHONDONTWRITEBYTECODE says not to (set on some machines):
# each of the four workers would rewrite all of them again on every run. The commands the tests
# run start warm, forked from one process that has imported the package (testing/forkserver.py;
# PANEBOARD_TEST_FRESH=1: each in a fresh interpreter, as the live tier of `make test` runs them,
# beside the real agents, where the time is the agents').
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

.PHONY: compile demo test check clients lint bench bench-quick wheel-check screenshot

$(BIN)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,nats,tui,mcp]'
	touch $@

# The editable install maps each `paneboard.X` to the folder X itself (setuptools' finder), so a
# module added to a folder imports at once, with no reinstall; `scripts/editable.py` installs
# again only when a package is not where it should be (a top-level folder added, an old install),
# and links build/typing/paneboard for mypy, which cannot run the finder. The bytecode is
# compiled as a normal install has it (PYTHONDONTWRITEBYTECODE would otherwise make every
# `paneboard` run compile its modules again).
compile: $(BIN)/.installed
	@$(BIN)/python scripts/editable.py check || \
	  { rm -f $(BIN)/.installed; $(MAKE) -s $(BIN)/.installed; }
	@$(BIN)/python scripts/editable.py typing build/typing
	@$(BIN)/python -m compileall -q $(PACKAGES)

demo: compile
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# docs/top.svg, the README's picture of `paneboard top`, from a demo board with real listeners.
screenshot: compile
	$(BIN)/python scripts/top_screenshot.py docs/top.svg

# Everything, as CI runs it: the real agent CLIs (`make clients` first) and tmux, NATS, the
# three-node cluster, the wheel. Two runs, each file's tests on one worker, so a file's session
# fixtures (the wheel, built once; a three-node cluster) start once: all but the live agents and
# tmux in TEST_WORKERS pytest-xdist workers, with the real tests that have no timed check
# (`untimed`, as each module marks them: the wake doors' headless resumes, Qoder CLI's module,
# Claude Code's wakes, most tests of Kilo Code, Hermes Agent, pi and Qwen Code, which only wait
# within their limits), then the rest of the live agent sessions and tmux in REAL_WORKERS
# workers, two at most, so they are not starved: their timing checks (a prompt delivered
# during a 3 s turn) missed with two workers on a loaded machine when the live part held every
# live test; with the untimed ones out, two workers passed it twice on two cores beside a load
# of 1 to 4 (REAL_WORKERS=0: one process). Both run; either failing fails, pytest's 5 (nothing
# collected) included. (Not `--dist loadgroup`: pytest-xdist 3.8 cannot group on pytest 9.)
TEST_WORKERS ?= 4
REAL_WORKERS ?= 2
test: compile
	status=0; \
	$(PYTEST) -n $(TEST_WORKERS) --dist loadfile -m "not real or untimed" \
	  || status=$$?; \
	PANEBOARD_TEST_FRESH=1 $(PYTEST) -n $(REAL_WORKERS) --dist loadfile -m "real and not untimed" \
	  || status=$$?; \
	exit $$status

# The fast tier, run after each change: the file store only; no agent CLI, no tmux, no NATS,
# no wheel build, no load test (pytest's markers; docs/developers.md, "Which tests to run"),
# and 25 examples for each Hypothesis property (`make test`: 100).
# Four pytest-xdist workers, even on two cores: a test mostly waits for a process it started.
CHECK_WORKERS ?= 4
check: compile
	$(PYTEST) -n $(CHECK_WORKERS) --hypothesis-profile=check \
	  -m "not real and not nats and not slow and not wheel"

# Each line of the list into its folder of .ci/tools, with npm, never globally, no auto-updater;
# a `pypi:` package with pip, into a venv of its own there.
clients:
	@command -v npm >/dev/null || { echo "make clients: npm is missing" >&2; exit 1; }
	@awk '!/^#/ && $$3 ~ /^pypi:/ {print $$2, substr($$3, 6) "==" $$4}' $(CLIENTS_LIST) | \
	while read folder spec; do \
	  echo "pip install into $(TOOLS)/$$folder: $$spec"; \
	  $(PYTHON) -m venv $(TOOLS)/$$folder && $(TOOLS)/$$folder/bin/pip install -q $$spec || exit 1; \
	done
	@for folder in $$(awk '!/^#/ && NF && $$3 !~ /^pypi:/ {print $$2}' $(CLIENTS_LIST) | sort -u); do \
	  specs=$$(awk -v f=$$folder '!/^#/ && $$2 == f {print $$3 "@" $$4}' $(CLIENTS_LIST)); \
	  echo "npm install into $(TOOLS)/$$folder:" $$specs; \
	  DISABLE_AUTOUPDATER=1 npm install --silent --no-audit --no-fund --save-exact \
	    --prefix $(TOOLS)/$$folder $$specs || exit 1; \
	done

lint: $(BIN)/.installed
	$(BIN)/ruff check $(PACKAGES) tests testing bench scripts setup.py
	$(BIN)/ruff format --check $(PACKAGES) tests testing bench scripts setup.py
	$(BIN)/mypy

bench: compile
	$(BIN)/pip install -q -e '.[dev,nats,tui,mcp,bench]'
	$(BIN)/python -m bench

bench-quick: compile
	$(BIN)/python -m bench --quick

# The wheel as users install it, in a fresh venv outside the checkout (also run by .ci/run).
wheel-check:
	bash scripts/wheel-check.sh
