# Entry points. Everything lives in scripts/ so it also works without make.
#   make run                      # app + worker on http://127.0.0.1:8000 (PORT=... to change)
#   make test                     # throwaway PostgreSQL + Redis, then pytest
#   make test ARGS="-k foo -x"    # extra pytest arguments
#   make test-fast                # the quick inner loop: parallel, slow tests left out
#   make lint                     # ruff
.PHONY: run test test-fast lint venv

ARGS ?=

run:
	scripts/run

test:
	scripts/test -n auto $(ARGS)

# parallel over the machine's cores (pytest-xdist), without what `tests/conftest.py` marks slow
# and without the second (SQLite) pass
test-fast:
	HV_TEST_EMBEDDED_PASS=0 scripts/test -n auto -m "not slow" -q $(ARGS)

venv:
	bash -c 'source scripts/_venv.sh && ensure_venv requirements-dev.txt'

lint: venv
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
