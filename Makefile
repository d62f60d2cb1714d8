# Two entry points do all set-up from scratch: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo simulate test lint typecheck contracts unit cluster controlplane clean bench-engine

venv: $(STAMP)

# The example out-of-tree plugin package is installed too: tests use it as users would.
PLUGIN_EXAMPLE := examples/berth-plugin-cost

$(STAMP): pyproject.toml $(PLUGIN_EXAMPLE)/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' -e $(PLUGIN_EXAMPLE)
	touch $(STAMP)

## Live demo: a local control plane (with kube-controller-manager), Berth under its own RBAC, a few hundred nodes and a mixed workload with volumes.
demo: venv controlplane
	$(BIN)/berth demo

## Offline: how the engine would place the example cluster.
simulate: venv
	$(BIN)/berth simulate --nodes examples/nodes.yaml --pods examples/pods.yaml --existing examples/existing-pods.yaml --seed 1

## Build (or reuse) etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kubectl outside the repository.
controlplane:
	tools/controlplane/build.sh

lint: venv
	$(BIN)/ruff check operator tests bench examples
	$(BIN)/ruff format --check operator tests bench examples

typecheck: venv
	$(BIN)/mypy
	$(BIN)/mypy --strict $(PLUGIN_EXAMPLE)/src

contracts: venv
	$(BIN)/lint-imports

unit: venv
	$(BIN)/pytest tests/unit $(PLUGIN_EXAMPLE)/tests

## Everything CI runs: static checks, unit tests, then the cluster tests against a real control plane.
test: venv lint typecheck contracts
	@if [ -x tools/controlplane/build.sh ]; then tools/controlplane/build.sh; fi
	$(BIN)/pytest

## Engine-only latency per decision (no API server); prints median and p99.
bench-engine: venv
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

## Side-by-side benchmark vs kube-scheduler and the null binder (bench/run.py; results in bench/results/).
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

.PHONY: bench bench-quick bench-speed bench-backlog-smoke bench-first-decision
bench-quick: venv controlplane $(BENCH_STAMP)
	$(BIN)/python -m bench.run --suite quick --repeats 1

bench: venv controlplane $(BENCH_STAMP)
	$(BIN)/python -m bench.run --suite full --repeats $(or $(BENCH_REPEATS),3)

# Issue 13's side-by-side tables, on an idle machine: the eight protocol workloads, the backlog
# drain, the 10,000-node points and the 10,000-pod memory point (results in bench/results/speed.*).
bench-speed: venv controlplane $(BENCH_STAMP)
	$(BIN)/python -m bench.run --suite speed --repeats $(or $(BENCH_REPEATS),3) --name speed

# The backlog drain at a tenth of its size: a few minutes, to check the workload runs.
bench-backlog-smoke: venv controlplane $(BENCH_STAMP)
	$(BIN)/python -m bench.run --suite backlog-smoke --repeats 1 --name backlog-smoke

# Launch to first bind: one pod pending, 500 nodes (results in bench/results/first-decision.*).
bench-first-decision: venv controlplane $(BENCH_STAMP)
	$(BIN)/python -m bench.run --suite first-decision --repeats $(or $(BENCH_REPEATS),3) --name first-decision
