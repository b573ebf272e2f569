# svc: one executable with DuckDB inside (PLATFORM-NOTES "One executable with DuckDB inside").
#   make            ui + dist/svc (version from package.json, git revision injected)
#   make build      dist/svc only        make test     npm test (typecheck + bun test)
#   make release    build + dist/SHA256SUMS
#   make install    appliance/install.sh as root (INSTALL_FLAGS=--no-start to not start it)
BUN ?= ./node_modules/.bin/bun
BIN ?= dist/svc
INSTALL_FLAGS ?=

.PHONY: all build ui test bench release install uninstall clean

all: ui build

# Bun itself comes from npm (pinned in package.json); a fresh clone gets it with `npm ci`.
$(BUN):
	npm ci

ui: $(BUN)
	@if [ -f ui/build.ts ]; then $(BUN) ui/build.ts; else echo "ui: no ui/build.ts, nothing to build (ui-dist/ is embedded when present)"; fi

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
