# hud-gym: `make demo` and `make test` install whatever is missing, then do their job.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
EXTRAS ?= dev,miniwob
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install system clean

demo: install
	$(PY) -m hud_gym.demo

test: install
	$(PY) -m pytest

install: $(STAMP)

# Benchmarks compare against peers side by side; the official MiniWoB++ env needs chromedriver.
bench: install
	bash scripts/install-system.sh chromium-driver
	$(PY) -m benchmarks.run

system:
	bash scripts/install-system.sh

# Re-run the install whenever the dependency list or the install scripts change.
$(STAMP): pyproject.toml Makefile scripts/install-system.sh
	bash scripts/install-system.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
