# The two commands of the README: `make demo` and `make test`.  Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.demo-stamp
NODE_DIR   := tests/e2e/node
NODE_STAMP := $(NODE_DIR)/node_modules/.installed-stamp
WEB_DIR    := web
WEB_STAMP  := $(WEB_DIR)/node_modules/.installed-stamp

.PHONY: setup demo-setup demo test lint typecheck unit notebooks bench lab clean

# Two install sets: `make demo` installs only what the demo runs (the package and its `demo` extra:
# the SDK and time servers it captures, DuckDB, the notebook runner), `make test` adds everything else
# the suite uses.  pip shows its progress (no -q): a fresh install takes a few minutes.
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check --upgrade pip

$(DEMO_STAMP): pyproject.toml setup.py mcpeval_nb/tables/_canon.c | $(PY)
	@echo "[setup] installing the package and the demo's dependencies into $(VENV)" >&2
	$(PY) -m pip install --disable-pip-version-check -e '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	@echo "[setup] installing the test suite's dependencies into $(VENV)" >&2
	$(PY) -m pip install --disable-pip-version-check -e '.[demo,test,browser,scale,otel,otel-test,engines-test]'
	touch $(STAMP)

# npm peers for the end-to-end tests (installed from the lock file when there is one).
$(NODE_STAMP): $(wildcard $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json)
	@if [ -f $(NODE_DIR)/package.json ]; then \
	  if command -v npm >/dev/null 2>&1; then \
	    cd $(NODE_DIR) && (npm ci --no-audit --no-fund --loglevel=error || npm install --no-audit --no-fund --loglevel=error); \
	  else echo "npm not found: end-to-end tests against npm servers will skip" >&2; fi; \
	fi
	@mkdir -p $(dir $(NODE_STAMP)) && touch $(NODE_STAMP)

# The widget renderer and require.js, copied beside the demo's exported pages so panels render offline.
$(WEB_STAMP): $(WEB_DIR)/package.json $(wildcard $(WEB_DIR)/package-lock.json)
	@if command -v npm >/dev/null 2>&1; then \
	  cd $(WEB_DIR) && (npm ci --no-audit --no-fund --loglevel=error || npm install --no-audit --no-fund --loglevel=error); \
	else echo "npm not found: the demo's HTML pages will show blank panels offline" >&2; fi
	@mkdir -p $(dir $(WEB_STAMP)) && touch $(WEB_STAMP)

setup: $(STAMP) $(NODE_STAMP) $(WEB_STAMP)

demo-setup: $(DEMO_STAMP) $(WEB_STAMP)

demo: demo-setup
	MPLBACKEND=Agg $(PY) -m mcpeval_nb.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check mcpeval_nb tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# One pytest-xdist worker per core; each test file runs whole, in order, on one worker (module fixtures
# are built once).  `make unit WORKERS=0` runs the suite in one process.  docs/performance.md.
WORKERS ?= auto
# The tests start hundreds of Python processes of this package (CLI runs, fixture servers, shims, kernels).
# With PYTHONDONTWRITEBYTECODE set (some shells and CI images set it), each one compiled the package's
# modules again (about 0.3 s of CPU per start) and every xdist worker rewrote the asserts of all test
# modules (about 5 s): the test runs write bytecode (into the gitignored __pycache__ directories).
TEST_ENV := PYTHONDONTWRITEBYTECODE= MPLBACKEND=Agg
unit: setup
	$(TEST_ENV) $(PY) -m pytest -q -n $(WORKERS) --dist loadfile --durations=25

# The notebooks run top to bottom under nbval against a small demo capture root built first.
NB_OUT := build/nbtest
notebooks: setup
	$(TEST_ENV) $(PY) -m mcpeval_nb.demo --root-only --quick --out $(NB_OUT)
	MCPEVAL_HOME=$(CURDIR)/$(NB_OUT)/root $(TEST_ENV) $(PY) -m pytest -q -p no:cacheprovider -p nbval \
	  --nbval-lax --nbval-current-env notebooks/

test: lint typecheck unit notebooks

bench: setup
	$(PY) -m bench

lab: setup
	$(PY) -m pip install -q -e '.[lab]'
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
