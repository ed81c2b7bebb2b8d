# Two commands set a fresh machine up: `make generate` and `make test`.
# Both create .venv and install the exact pins on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup generate check test test-collect lint bench update-specs clean envtest

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

generate: $(STAMP)
	$(VENV)/bin/kccgen generate

check: $(STAMP)
	$(VENV)/bin/kccgen check
	$(VENV)/bin/kccgen lint-crds

lint: $(STAMP)
	$(VENV)/bin/ruff check kccgen discovery generator runtime mockgcp tools bench tests setup.py
	$(PY) -m tools.devtree >/dev/null
	$(VENV)/bin/mypy
	# lint-imports puts its working directory first on sys.path: run it in the
	# link tree, or it would find the checkout's kccgen/ with no subpackages.
	cd $(VENV)/devtree && ../bin/lint-imports --config $(CURDIR)/pyproject.toml --no-cache --no-logo

# envtest: a real (CRD-only) Kubernetes API server for tests/test_envtest_crds.py,
# built once from Debian's sources and cached in $$HOME/.cache/kccgen-envtest
# (cold: minutes; warm: instant). Its `export KUBEBUILDER_ASSETS=...` line goes to
# $(ENVTEST_ENV) for `make test`. When it cannot be built the envtest tests skip
# with the reason, except under KCCGEN_CI=1 (.ci/run), where that is a failure.
ENVTEST_TOOLS ?= ../shared/tools/envtest
ENVTEST_ENV := $(VENV)/envtest.env

envtest: $(STAMP)
	@rm -f $(ENVTEST_ENV)
	@if out=$$($(ENVTEST_TOOLS)/build.sh); then \
		printf '%s\n' "$$out" | grep '^export KUBEBUILDER_ASSETS=' > $(ENVTEST_ENV); \
	else \
		echo "!! envtest: $(ENVTEST_TOOLS)/build.sh failed: the envtest tests will skip (fail under KCCGEN_CI=1)" >&2; \
		test -z "$$KCCGEN_CI"; \
	fi

# Two workers, each taking whole test files (their module fixtures, such as the
# full IR or the envtest server, are built once per file, as in one process).
test: $(STAMP) envtest
	if [ -f $(ENVTEST_ENV) ]; then . ./$(ENVTEST_ENV); fi; KCCGEN_ENVTEST_TOOLS=$(abspath $(ENVTEST_TOOLS)) $(PY) -m pytest -n 2 --dist loadfile

# Fails when pytest would collect nothing (pytest exits 5): CI treats that as a failure.
test-collect: $(STAMP)
	$(PY) -m pytest --collect-only -q

bench: $(STAMP)
	$(PY) bench/run.py
	$(PY) bench/apply.py
	$(PY) bench/operator.py
	$(PY) bench/generate.py

update-specs: $(STAMP)
	$(VENV)/bin/kccgen update-specs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
