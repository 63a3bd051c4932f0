# searchsvc: `make run` starts a development server, `make test` runs every check.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -buildid= -X main.version=$(VERSION)
BUILD     := CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)"
DATA_DIR  ?= ./data
FUZZTIME  ?= 20s

.PHONY: all run test build dist bench crashtest fuzz clean

all: build

## run: build and start the server with development defaults (plain http on
## 127.0.0.1:8080, secrets generated into DATA_DIR with a warning)
run: build
	SESSION_SECURE=false DATA_DIR=$(DATA_DIR) LISTEN_ADDR=127.0.0.1:8080 ./bin/searchsvc serve

## test: formatting, vet, and every test with the race detector
test:
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './testdata/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
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

## bench: every benchmark, with allocations
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

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
