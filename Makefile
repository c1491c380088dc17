# pyjax: two commands.
#   make test   install what the tests need (fresh Debian 12, as root), lint, run the test suite
#   make serve  build the browser playground and serve it on http://127.0.0.1:$(PORT)/
#               (falls back to the native demo, examples/demo.py, where node/npm are missing)
# Others: make demo (native MLP demo), make bench (README's benchmark table), make format, make wheel.

PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
PORT ?= 8000
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get
MICROPIP := web/pypi/micropip-0.11.1-py3-none-any.whl

.PHONY: test serve demo bench deps sysdeps pydeps lint pytest format wheel site clean

# Lint and tests both run (a lint error does not hide test results); either failing fails `make test`.
test: deps
	@status=0; \
	$(MAKE) --no-print-directory lint || status=1; \
	$(MAKE) --no-print-directory pytest || status=1; \
	exit $$status

deps: sysdeps pydeps web/node_modules/pyodide/pyodide.mjs $(MICROPIP)

# Mesa's lavapipe (software Vulkan) gives wgpu-py a WebGPU adapter on a headless machine;
# Debian's Chromium runs the browser tests (Playwright drives it; no browser download).
sysdeps:
	@if command -v apt-get >/dev/null 2>&1; then \
	  $(APT) update -qq && $(APT) install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null && \
	  $(APT) install -y -qq chromium >/dev/null; \
	else echo "apt-get not found: install Mesa's Vulkan drivers (lavapipe) yourself for the webgpu tests"; fi

# PIP_BREAK_SYSTEM_PACKAGES: Debian's own python3 refuses pip installs (PEP 668) unless told; CI is disposable.
pydeps:
	@$(PYTHON) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m ensurepip --upgrade >/dev/null 2>&1 || \
	  $(APT) install -y -qq python3-pip >/dev/null
	PIP_BREAK_SYSTEM_PACKAGES=1 $(PIP) install --progress-bar off -q -e '.[dev,native]'

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

# Two worker processes (pytest-xdist): about twice as fast on two cores, and each process compiles
# half of the suite's ~20k kernels. The browser tests share one Chromium and stay serial; they run
# and report even when the native suite failed (either failing fails the target).
pytest:
	@status=0; \
	$(PYTHON) -m pytest tests -q -n 2 --durations=15 || status=1; \
	$(PYTHON) -m pytest playwright-tests -q -p no:playwright --durations=10 || status=1; \
	exit $$status

format:
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix .

wheel:
	$(PYTHON) -m build --wheel

web/node_modules/pyodide/pyodide.mjs: web/package.json
	cd web && npm install --no-audit --no-fund --loglevel=error

# micropip (pure Python, packaging vendored) is not in the npm package: the plain-Pyodide browser
# tests load it from here, as a page would from Pyodide's CDN.
$(MICROPIP):
	$(PIP) download --no-deps --only-binary=:all: --python-version 3.14 -q -d web/pypi micropip==0.11.1

site: web/node_modules/pyodide/pyodide.mjs
	$(PYTHON) site/build.py

serve:
	@if command -v npm >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory site && PORT=$(PORT) $(PYTHON) site/serve.py --port $(PORT); \
	else \
	  echo "make serve: npm not found, so no browser playground; running the native demo instead"; \
	  $(PYTHON) examples/demo.py; \
	fi

demo:
	$(PYTHON) examples/demo.py

# Native rows (pyjax wasm vs JAX CPU and jax-js in Node) into the README's table, about 2 minutes.
bench:
	@[ -d bench/node_modules/@jax-js ] || (cd bench && npm install --no-audit --no-fund --loglevel=error) || true
	$(PYTHON) bench/run.py

# optax's and chex's own test suites on pyjax through alias_jax (hours on 2 cores; EVERY=8 runs a fixed eighth).
EVERY ?= 1
ecosystem:
	$(PIP) install -q optax chex
	$(PYTHON) tests/ecosystem/run.py --every $(EVERY) --models
	$(PYTHON) -m pytest tests/test_ecosystem.py -q -m slow

clean:
	rm -rf build dist *.egg-info site/_build .pytest_cache .ruff_cache .hypothesis
