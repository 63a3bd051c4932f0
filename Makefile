# searchsvc: `make run` starts a development server, `make test` runs every check.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -buildid= -X main.version=$(VERSION)
BUILD     := CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)"
DATA_DIR  ?= ./data
# `make run` passes LISTEN_ADDR and BASE_URL on from the environment or
# the command line (make run LISTEN_ADDR=0.0.0.0:8080
# BASE_URL=http://pi.local:8080); unset or empty, LISTEN_ADDR is
# 127.0.0.1:8080 and BASE_URL the server's default.
FUZZTIME  ?= 20s
# STATICCHECK: go run builds the pinned version once into the build cache,
# so make test needs nothing installed but Go; .ci/run passes the binary
# it installed.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all run test build dist deb bench crashtest fuzz clean install uninstall reproducible

all: build

## run: build and start the server with development defaults (plain http on
## LISTEN_ADDR, 127.0.0.1:8080 unless set; secrets generated into DATA_DIR
## with a warning, which every command then finds there by itself)
run: build
	SESSION_SECURE=false DATA_DIR='$(DATA_DIR)' LISTEN_ADDR='$(or $(LISTEN_ADDR),127.0.0.1:8080)' $(if $(BASE_URL),BASE_URL='$(BASE_URL)' )./bin/searchsvc serve

## test: formatting, vet, staticcheck, and every test with the race detector
test:
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './testdata/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) test -race -count=1 ./...

## build: bin/searchsvc, static, stripped, reproducible
build:
	$(BUILD) -o bin/searchsvc .

## dist: release binaries for the Pi family and amd64, with SHA256SUMS
dist:
	rm -rf dist && mkdir -p dist
	GOOS=linux GOARCH=amd64 $(BUILD) -o dist/searchsvc-linux-amd64 .
	GOOS=linux GOARCH=arm64 $(BUILD) -o dist/searchsvc-linux-arm64 .
	GOOS=linux GOARCH=arm GOARM=7 $(BUILD) -o dist/searchsvc-linux-armv7 .
	GOOS=linux GOARCH=arm GOARM=6 $(BUILD) -o dist/searchsvc-linux-armv6 .
	cd dist && sha256sum searchsvc-* > SHA256SUMS && cat SHA256SUMS

## deb: Debian packages of the release binaries, built by .ci/debian/build
## with dpkg-deb alone: dist/searchsvc_$(DEB_VERSION)_{amd64,arm64,armhf}.deb,
## their checksums added to SHA256SUMS. armhf takes the armv6 binary, which
## runs on every 32-bit Pi (Raspberry Pi OS's armhf is ARMv6). DEB_VERSION
## comes from VERSION: tag v1.2.3 gives 1.2.3-1, an untagged commit
## 0~<commit>-1; the files are dated SOURCE_DATE_EPOCH, the last commit's time.
DEB_VERSION ?= $(shell echo '$(VERSION)' | sed -e 's/^v\([0-9]\)/\1/' -e '/^[0-9][0-9]*\./!s/^/0~/' -e 's/-/+/g')-1
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
deb: dist
	@set -e; for a in amd64:amd64 arm64:arm64 armhf:armv6; do \
		SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' .ci/debian/build dist/searchsvc-linux-$${a#*:} $${a%%:*} '$(DEB_VERSION)' dist; \
	done
	cd dist && sha256sum searchsvc_*.deb | tee -a SHA256SUMS

## bench: every benchmark, with allocations; the over-HTTP profile ratio
## with 50,000 requests a side, as fewer leave it at the mercy of the machine.
## No timeout: the root package's benchmarks (a 60,000-mail sync from
## Dovecot, 100,000 items after a restart, a minute of idle) take longer
## together than go test's default 10 minutes.
bench:
	$(GO) test -run '^$$' -bench . -skip ProfileOverHTTP -benchmem -count=1 -timeout 0 ./...
	$(GO) test -run '^$$' -bench ProfileOverHTTP -benchtime 50000x -benchmem -count=1 .

## crashtest: the storage kill -9 test with many more cycles than make test
crashtest:
	STORAGE_CRASH_CYCLES=2000 $(GO) test -run 'TestKill' -count=1 -timeout 60m ./storage

## fuzz: run each fuzz target for FUZZTIME
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin dist

# install, uninstall: PREFIX for the binary; DESTDIR stages everything under
# another root (packaging, or a dry run as a normal user); BIN picks the
# binary, e.g. BIN=dist/searchsvc-linux-arm64 on a Pi without Go.
PREFIX    ?= /usr/local
DESTDIR   ?=
BIN       ?= bin/searchsvc
UNITDIR   := $(DESTDIR)/etc/systemd/system
CONFDIR   := $(DESTDIR)/etc/searchsvc
CREDDIR   := $(CONFDIR)/credentials

## install: the binary to PREFIX/bin and searchsvc.service to
## /etc/systemd/system; creates /etc/searchsvc/searchsvc.env and the two
## secrets in /etc/searchsvc/credentials only if absent (never overwritten).
## It does not build: `make build && sudo make install`.
install:
	@test -x $(BIN) || { echo "$(BIN) not found: run 'make build' first (as yourself, not root)"; exit 1; }
	install -d -m 0755 $(DESTDIR)$(PREFIX)/bin $(UNITDIR) $(CONFDIR)
	install -d -m 0700 $(CREDDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/searchsvc
	sed 's|^ExecStart=/usr/local/bin/searchsvc |ExecStart=$(PREFIX)/bin/searchsvc |' searchsvc.service > $(UNITDIR)/.searchsvc.service.tmp
	chmod 0644 $(UNITDIR)/.searchsvc.service.tmp
	mv -f $(UNITDIR)/.searchsvc.service.tmp $(UNITDIR)/searchsvc.service
	@if [ -e $(CONFDIR)/searchsvc.env ]; then \
		echo "kept $(CONFDIR)/searchsvc.env"; \
	else \
		install -m 0600 testdata/systemd/searchsvc.env.example $(CONFDIR)/searchsvc.env && \
		echo "created $(CONFDIR)/searchsvc.env"; \
	fi
	@set -e; umask 077; \
	for s in session_secret:48 credentials_key:32; do \
		name=$${s%%:*}; bytes=$${s#*:}; f=$(CREDDIR)/$$name; \
		if [ -e "$$f" ]; then echo "kept $$f"; continue; fi; \
		tmp=$$(mktemp $(CREDDIR)/.$$name.XXXXXX); \
		head -c $$bytes /dev/urandom | base64 > "$$tmp"; \
		test "$$(wc -c < "$$tmp")" -gt $$bytes || { rm -f "$$tmp"; echo "could not generate $$f"; exit 1; }; \
		if ln "$$tmp" "$$f" 2>/dev/null; then echo "created $$f ($$bytes random bytes, base64, 0600)"; \
		else echo "kept $$f"; fi; \
		rm -f "$$tmp"; \
	done
	@echo
	@echo "Next: set BASE_URL (and anything else) in /etc/searchsvc/searchsvc.env, then"
	@echo "  systemctl daemon-reload && systemctl enable --now searchsvc"

## uninstall: removes the binary and the unit; never the secrets
## (/etc/searchsvc) or the data (/var/lib/searchsvc).
uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null 2>&1 && \
		{ systemctl is-enabled --quiet searchsvc 2>/dev/null || systemctl is-active --quiet searchsvc 2>/dev/null; }; then \
		echo "searchsvc is enabled or running: 'systemctl disable --now searchsvc' first"; exit 1; \
	fi
	rm -f $(DESTDIR)$(PREFIX)/bin/searchsvc $(UNITDIR)/searchsvc.service
	@echo "kept $(CONFDIR) (configuration and secrets) and /var/lib/searchsvc (data)"

## reproducible: snapshots this tree into two directories at different
## paths, runs `make dist` in each (the second with an empty build cache) and
## fails unless both SHA256SUMS are identical; then dist/ holds the build.
reproducible:
	@set -e; tmp=$$(mktemp -d); version='$(VERSION)'; \
	echo "== snapshot of this tree (VERSION=$$version) into $$tmp/a and $$tmp/b"; \
	mkdir "$$tmp/a" "$$tmp/b"; \
	tar -cf "$$tmp/src.tar" --exclude=./.git --exclude=./bin --exclude=./dist --exclude=./data .; \
	tar -xf "$$tmp/src.tar" -C "$$tmp/a"; tar -xf "$$tmp/src.tar" -C "$$tmp/b"; \
	echo "== build 1 in $$tmp/a"; \
	$(MAKE) --no-print-directory -C "$$tmp/a" dist VERSION="$$version"; \
	echo "== build 2 in $$tmp/b, empty GOCACHE"; \
	GOCACHE="$$tmp/gocache" $(MAKE) --no-print-directory -C "$$tmp/b" dist VERSION="$$version"; \
	if cmp -s "$$tmp/a/dist/SHA256SUMS" "$$tmp/b/dist/SHA256SUMS"; then \
		rm -rf dist; cp -R "$$tmp/b/dist" dist; chmod -R u+w "$$tmp"; rm -rf "$$tmp"; \
		echo "reproducible: both builds have identical SHA256SUMS; dist/ holds them"; \
	else \
		echo "NOT reproducible: SHA256SUMS differ (builds kept in $$tmp)"; \
		diff "$$tmp/a/dist/SHA256SUMS" "$$tmp/b/dist/SHA256SUMS" || true; exit 1; \
	fi
