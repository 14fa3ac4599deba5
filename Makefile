# The two commands of the README. Each sets up what it needs: a virtualenv in .venv with the
# package and its test extras; `memstream up` (run by both) resolves the Kafka jars with Maven
# into ~/.cache/memstream and starts the embedded PostgreSQL.
PYTHON ?= python3
VENV := .venv
INSTALLED := $(VENV)/.installed

.PHONY: demo test clean-venv

demo: $(INSTALLED)
	$(VENV)/bin/memstream demo

test: $(INSTALLED)
	$(VENV)/bin/python -m pytest

$(INSTALLED): pyproject.toml setup.py streams/erasure/_opening.c
	@command -v java >/dev/null || { echo "Java 17+ is required for the local Kafka broker (apt-get install openjdk-17-jre-headless)"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is required to fetch the Kafka jars (apt-get install maven)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e ".[test]"
	touch $(INSTALLED)

clean-venv:
	rm -rf $(VENV)
