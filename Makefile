# svc: one executable with DuckDB and the dashboard inside (docs/INSTALL.md "Build the executable").
#   make            = make build
#   make build      dist/svc: builds the dashboard (ui-dist/) and embeds it, version from
#                   package.json, git revision injected; fails if the dashboard does not build
#   make ui         ui-dist/ only (for a source run)     make test     npm test (typecheck + bun test)
#   make release    build + dist/SHA256SUMS
#   make install    appliance/install.sh as root (INSTALL_FLAGS=--no-start to not start it)
BUN ?= ./node_modules/.bin/bun
BIN ?= dist/svc
INSTALL_FLAGS ?=

.PHONY: all build ui test bench release install uninstall clean

all: build

# Bun itself comes from npm (pinned in package.json); a fresh clone gets it with `npm ci`.
$(BUN):
	npm ci

ui: $(BUN)
	$(BUN) ui/build.ts

# scripts/build.ts builds the dashboard itself before compiling: no `make ui` needed first.
build: $(BUN)
	$(BUN) scripts/build.ts --outfile $(BIN)

test: $(BUN)
	npm test

bench: $(BUN)
	npm run bench

release: all
	cd $(dir $(BIN)) && sha256sum $(notdir $(BIN)) > SHA256SUMS && cat SHA256SUMS

install: $(BIN)
	bash appliance/install.sh --binary $(BIN) $(INSTALL_FLAGS)

$(BIN):
	$(MAKE) build

uninstall:
	bash appliance/uninstall.sh

clean:
	rm -rf dist ui-dist
