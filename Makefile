# pyjax: two commands.
#   make test   install what the tests need (Debian 12, as root), lint, run the test suite
#   make serve  run the demo (native for now; PORT is accepted and ignored until the browser host lands)

PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
PORT ?= 8000
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test serve deps sysdeps pydeps lint pytest format wheel clean

test: deps lint pytest

deps: sysdeps pydeps

# Mesa's lavapipe (software Vulkan) gives wgpu-py a WebGPU adapter on a headless machine.
sysdeps:
	@if command -v apt-get >/dev/null 2>&1; then \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    mesa-vulkan-drivers libvulkan1 >/dev/null; \
	else echo "apt-get not found: install Mesa's Vulkan drivers (lavapipe) yourself for the webgpu tests"; fi

# PIP_BREAK_SYSTEM_PACKAGES: Debian's own python3 refuses pip installs (PEP 668) unless told; CI is disposable.
pydeps:
	@$(PYTHON) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m ensurepip --upgrade >/dev/null 2>&1 || \
	  ($(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null)
	PIP_BREAK_SYSTEM_PACKAGES=1 $(PIP) install --progress-bar off -q -e '.[dev,native]'

lint:
	$(PYTHON) -m ruff check pyjax tests bench examples
	$(PYTHON) -m ruff format --check .

pytest:
	$(PYTHON) -m pytest tests -q

format:
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix pyjax tests bench examples

wheel:
	$(PYTHON) -m build --wheel

# Until the browser playground lands this runs the native demo; PORT is accepted and ignored.
serve:
	@echo "make serve: running the native demo (the browser playground is not built yet; PORT=$(PORT) is ignored)"
	$(PYTHON) examples/demo.py

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
