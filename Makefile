# The two commands of the README: `make demo` and `make test`.  Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
NODE_DIR   := tests/e2e/node
NODE_STAMP := $(NODE_DIR)/node_modules/.installed-stamp
WEB_DIR    := web
WEB_STAMP  := $(WEB_DIR)/node_modules/.installed-stamp

.PHONY: setup demo test lint typecheck unit notebooks bench lab clean

$(STAMP): pyproject.toml setup.py mcpeval_nb/tables/_canon.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,browser,scale,otel,otel-test,engines-test]'
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

demo: setup
	MPLBACKEND=Agg $(PY) -m mcpeval_nb.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check mcpeval_nb tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: setup
	MPLBACKEND=Agg $(PY) -m pytest -q

# The notebooks run top to bottom under nbval against a small demo capture root built first.
NB_OUT := build/nbtest
notebooks: setup
	MPLBACKEND=Agg $(PY) -m mcpeval_nb.demo --root-only --quick --out $(NB_OUT)
	MCPEVAL_HOME=$(CURDIR)/$(NB_OUT)/root MPLBACKEND=Agg $(PY) -m pytest -q -p no:cacheprovider \
	  --nbval-lax --nbval-current-env notebooks/

test: lint typecheck unit notebooks

bench: setup
	$(PY) -m bench

lab: setup
	$(PY) -m pip install -q -e '.[lab]'
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
