# hud-gym: `make demo` and `make test` install whatever is missing, then do their job.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
EXTRAS ?= dev,miniwob,ubuntu,sb3,ray,train,docker,agents,ui,osworld,office,mcp
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast check docs bench bench-families install system clean wheel-smoke

demo: install
	$(PY) -m hud_gym.demo

# Two tiers (markers put on in tests/tiers.py): `make test` runs every test (CI; the aim is 15
# minutes on 2 cores, it takes about 30 today); `make test-fast` is the inner loop: it leaves out
# the `e2e` tests (real Chromium, Xvfb, apps), the `slow` (> ~10 s: trainers, Ray, process drills)
# and `soak` ones, and the `subprocess` half of the controller matrix outside a protocol subset
# (`matrix`).
# Most tests wait on Chromium, Xvfb or a subprocess: $(JOBS) pytest-xdist workers keep both cores
# busy. `worksteal` hands each worker a contiguous share of the suite (a module's fixtures are made
# once per worker that runs it) and an idle worker takes half of a busy one's queue, so a module of
# long tests (the office oracles) no longer holds one worker while the others idle. The `serial`
# tier measures memory and CPU, so it runs afterwards, alone.
JOBS ?= 3
XDIST := -n $(JOBS) --dist worksteal
# Every test starts Python processes (workers, controller servers, the CLI) that import hud_gym:
# with PYTHONDONTWRITEBYTECODE set (as on these machines) each would compile it again.
BYTECODE := $(PY) -m compileall -q hud_gym controllers wrappers
test: install check
	$(BYTECODE)
	$(PY) -m pytest $(XDIST) -m "not serial"
	$(PY) -m pytest -m serial

FAST := not e2e and not slow and not soak and not matrix and not serial
test-fast: install
	$(BYTECODE)
	$(PY) -m pytest $(XDIST) -m "$(FAST)"

# Lint, format, types, import layers and the docs' strict build (scripts/check.sh); `make test` runs it first.
check: install
	PY=$(PY) bash scripts/check.sh

# The docs site (mkdocs.yml, docs/) into site/: offline, nothing fetched at build time.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

install: $(STAMP)

# Benchmarks compare against peers side by side; the official MiniWoB++ env needs chromedriver.
bench: install
	bash scripts/install-system.sh chromium-driver
	$(PY) -m benchmarks.run

# Only the 100-seed proof of every task family (`make bench` runs it too; hours on 2 cores).
bench-families: install
	$(PY) -m benchmarks.families_check --seeds 100

# The built wheel, installed into a clean venv, run from outside the checkout (CI runs it after `make test`).
wheel-smoke: install
	bash scripts/wheel-smoke.sh $(PYTHON)

system:
	bash scripts/install-system.sh

# Re-run the install whenever the dependency lists or the install scripts change. The system
# packages come from scripts/install-system.sh, which installs the controller images' lists
# (docker/*/packages.txt) through docker/install-packages.sh: the same lists and script as the images.
$(STAMP): pyproject.toml Makefile scripts/install-system.sh scripts/overlay-venv.sh docker/install-packages.sh docker/ubuntu/packages.txt docker/browser/packages.txt
	bash scripts/install-system.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of torch on these machines; an unpinned torch (pulled by stable-baselines3)
	# would download several GB of CUDA packages.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	# pyautogui pulls python3-xlib 0.15, which writes the same Xlib/ package as python-xlib 0.33:
	# make sure the newer one is the one installed.
	$(PY) -c "import Xlib, sys; sys.exit(Xlib.__version__ < (0, 33))" || \
		$(PY) -m pip install -q --force-reinstall --no-deps "python-xlib>=0.33"
	# verifiers 0.4 pins openai<3 (the agents extra needs openai 3): it gets a venv layered over this
	# one, holding only what differs (tests/test_verifiers_v1.py runs itself there).
	bash scripts/overlay-venv.sh $(PY) $(VENV)-verifiers "verifiers>=0.4,<0.5"
	# OpenEnv (openenv-core 0.3) pins pillow<13 and pulls gradio and fastmcp: its server contract and
	# client (hud_gym.protocols.openenv, tests/protocols/test_openenv.py) run in an overlay venv.
	bash scripts/overlay-venv.sh $(PY) $(VENV)-openenv "openenv-core==0.3.0"
	# OSWorld's own metric functions, for the grading-parity test (tests/osworld/test_parity.py):
	# desktop-env without its dependencies (its pins: gymnasium 0.28, numpy<2, torch 2.5), plus only
	# what its compared metric modules import.
	bash scripts/overlay-venv.sh $(PY) $(VENV)-osworld formulas xmltodict tldextract cssselect pdfplumber scikit-image
	bash scripts/overlay-venv.sh $(PY) $(VENV)-osworld --no-deps "desktop-env==1.0.2"
	# HUD's own SDK (hud 0.6.21 pins fastmcp==3.4.10, and its CLI breaks with typer 0.29): the client
	# that drives `hud-gym serve --protocol hud` in tests/protocols/test_hud_control_sdk.py.
	bash scripts/overlay-venv.sh $(PY) $(VENV)-hud "hud==0.6.21"
	touch $@

clean:
	rm -rf $(VENV) $(VENV)-verifiers $(VENV)-osworld $(VENV)-hud $(VENV)-openenv build site *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache
