# attnscope: `make serve` starts the server on http://127.0.0.1:8000, `make test` runs every test.
# Both install what they need first (CPU PyTorch where none is installed yet).
PYTHON ?= python3
PIP = $(PYTHON) -m pip

.PHONY: install install-test browser serve test lint bench

install:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) install torch==2.13.0
	$(PIP) install -q -e .

install-test:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) install torch==2.13.0
	$(PIP) install -q -e '.[test]'

browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }

serve: install
	attnscope serve

lint: install-test
	$(PYTHON) -m ruff check app tests bench

test: install-test browser lint
	$(PYTHON) -m pytest -q -p no:cacheprovider

bench: install-test
	$(PIP) install -q -e '.[bench]'
	$(PYTHON) bench/api.py
	$(PYTHON) bench/browser.py
	$(PYTHON) bench/model.py
