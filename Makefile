# Two commands set a fresh machine up: `make generate` and `make test`.
# Both create .venv and install the exact pins on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help setup generate check test test-collect lint bench update-specs bump clean envtest

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## create .venv and install the exact pins (done by every target that needs it)

generate: $(STAMP) ## regenerate generated/ from specs/ and templates/ (a no-op when the stamp matches)
	$(VENV)/bin/kccgen generate

check: $(STAMP) ## the drift gate: exit 1 when generated/ differs from what the specs produce; lint the CRDs
	$(VENV)/bin/kccgen check
	$(VENV)/bin/kccgen lint-crds

lint: $(STAMP) ## ruff, mypy and the import-layer contracts (lint-imports)
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

envtest: $(STAMP) ## build the CRD-only API server the envtest tests use, from ../shared/tools/envtest (cached)
	@rm -f $(ENVTEST_ENV)
	@if out=$$($(ENVTEST_TOOLS)/build.sh); then \
		printf '%s\n' "$$out" | grep '^export KUBEBUILDER_ASSETS=' > $(ENVTEST_ENV); \
	else \
		echo "!! envtest: $(ENVTEST_TOOLS)/build.sh failed: the envtest tests will skip (fail under KCCGEN_CI=1)" >&2; \
		test -z "$$KCCGEN_CI"; \
	fi

# Two workers, each taking whole test files (their module fixtures, such as the
# full IR or the envtest server, are built once per file, as in one process).
test: $(STAMP) envtest ## the whole test suite on two workers (about 10 minutes on 2 cores)
	if [ -f $(ENVTEST_ENV) ]; then . ./$(ENVTEST_ENV); fi; KCCGEN_ENVTEST_TOOLS=$(abspath $(ENVTEST_TOOLS)) $(PY) -m pytest -n 2 --dist loadfile

# Fails when pytest would collect nothing (pytest exits 5): CI treats that as a failure.
test-collect: $(STAMP) ## fail when pytest would collect no test (CI's check)
	$(PY) -m pytest --collect-only -q

bench: $(STAMP) ## the benchmarks: reconcile overhead, kccctl apply, the operator, generation
	$(PY) bench/run.py
	$(PY) bench/apply.py
	$(PY) bench/operator.py
	$(PY) bench/generate.py

update-specs: $(STAMP) ## refresh the pinned Discovery documents from the installed client
	$(VENV)/bin/kccgen update-specs

# A client bump in one command: `make bump VERSION=2.202.0` (no VERSION: the newest
# release). It moves the pin in pyproject.toml, constraints.txt and the README,
# installs that client, pins its documents, adds kind files for new APIs,
# regenerates, refreshes docs/coverage.*, docs/field-parity.md and
# docs/verified.json, and writes docs/changes/<from>-<to>.md. When decisions are
# needed it lists them all (exit 2); write them and run it again. The stamp is
# touched whatever the outcome: the venv then holds exactly the pins on disk.
bump: $(STAMP) ## move the client pin to VERSION (default: newest), regenerate, refresh the docs, write the changelog
	$(VENV)/bin/kccgen bump $(VERSION); status=$$?; touch $(STAMP); exit $$status

clean: ## remove .venv and the tool caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# `make help` lists every target with the text after its `##`. Python, not awk:
# make, python3 and sh are all a fresh machine needs.
help: ## list the targets with what each does
	@$(PYTHON) -c 'import re, sys; [print(f"  {m[1]:<13} {m[2]}") for m in re.finditer(r"^([a-z][a-z-]*):[^=\n]*?## (.+)$$", open(sys.argv[1]).read(), re.M)]' $(firstword $(MAKEFILE_LIST))
