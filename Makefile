# wmr_dynamics — two commands: `make run` (the main job) and `make test` (the whole suite).
# Both install what they need into .venv first (idempotent; a no-op when up to date).
# Needs only python3 (3.10+ with the venv module), cmake and g++.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= out

# DDS must stay on loopback on every machine we run on (ROS_NOTES.md): every recipe that may start
# rclpy gets these; the domain id is per make invocation, so parallel runs do not cross-talk.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_DOMAIN_ID ?= $(shell $(PYTHON) -c "import random; print(random.randint(1, 101))")
export MPLBACKEND := Agg

.PHONY: install run test lint fuzz clean

install: $(STAMP)

# ROS 2: a system Python that imports rclpy (a sourced ROS 2 install) is used as is (the venv sees its
# packages); otherwise rclpy and the messages come from PyPI (requirements-ros.txt).  Either way the interface
# packages PyPI lacks (tf2_msgs, grid_map_msgs) are built into the venv where they do not import yet.
ROS_SYSTEM := $(shell $(PYTHON) -c "import rclpy" >/dev/null 2>&1 && echo yes)

$(STAMP): requirements.txt requirements-dev.txt requirements-ros.txt setup.py ros_compat/build.py
	@test -x $(PY) || $(PYTHON) -m venv $(if $(ROS_SYSTEM),--system-site-packages) $(VENV) || { echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu run: apt-get install python3-venv"; exit 1; }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(if $(ROS_SYSTEM),echo "using the system's ROS 2 (rclpy imports from $(PYTHON))",$(PY) -m pip install --quiet -r requirements-ros.txt)
	$(PY) ros_compat/build.py
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@echo "compiling the simulation engine into the venv's cache (several minutes on a 2-core machine, once) ..."
	$(PY) -m wmr_dynamics.warmup
	@touch $(STAMP)
	@echo "installed into $(VENV)"

# The main job: Rocky 7 on Gaussian rough terrain (RMS 0.05 m, correlation length 0.2 m, seed 1),
# 0.5 m/s for 10 s with the stabilized-DAE kinematic model; summary, plots and CSV in $(OUT)/.
run: install
	$(PY) -m wmr_dynamics.cli sim --vehicle rocky7 --terrain rough --rms 0.05 --corr-len 0.2 --seed 1 \
		--speed 0.5 --duration 10 --dt 0.04 --out $(OUT)
	$(PY) -m wmr_dynamics.cli show --vehicle rocky7 --terrain rough --seed 1 --out $(OUT) > /dev/null

# the warm-up is a no-op (about a second) when the engine cache is warm, and recompiles after a kernel edit
test: install
	$(PY) -m wmr_dynamics.warmup
	$(PY) -m pytest -n 2 -q

lint: install
	$(VENV)/bin/ruff check .

# The fuzz suite (test/test_fuzz.py) with many examples per target (FUZZ_EXAMPLES x a per-target weight, about
# 23 x FUZZ_EXAMPLES in all); the outcome counts per target go to docs/fuzz-results.json (docs/reliability.md).
FUZZ_EXAMPLES ?= 700
fuzz: install
	$(PY) -m wmr_dynamics.warmup
	WMR_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) WMR_FUZZ_REPORT=docs/fuzz-results.json $(PY) -m pytest -q -p no:cacheprovider \
		test/test_fuzz.py
	$(PY) test/fuzz_report.py docs/fuzz-results.json

clean:
	rm -rf $(VENV) $(OUT) build install log *.egg-info
