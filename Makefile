# The two things a maintainer runs (see README.md):
#   make build [ARGS="--executorch-ref v1.5.1 ..."]   generate the library into build/ExecuTorch
#   make test                                        lint, type-check and run every test
PYTHON ?= python3
ARGS ?=

.PHONY: build test deps lint typecheck pytest bench

deps: .deps-installed
.deps-installed: scripts/install-deps requirements.txt requirements-dev.txt package.json package-lock.json
	scripts/install-deps
	touch $@

build: deps
	$(PYTHON) -m generator build $(ARGS)

lint: deps
	ruff check .
	ruff format --check .

typecheck: deps
	mypy

# pytest exits 5 when it collected no test: that is a failure here, and says so.
pytest: deps
	@$(PYTHON) -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "FAIL: pytest ran no test" >&2; fi; exit $$rc

test: lint typecheck pytest

bench: deps
	$(PYTHON) benchmarks/bench_build.py
