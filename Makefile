# flinkgo — the front door.
#   make demo   a real Flink job (MiniCluster) feeding generated orders through the Go example agent
#   make test   every Go and Java test, short fuzz runs, the crash simulation
#   make bench  benchmarks (figures go to benchmarks/)

GO       ?= go
MVN      ?= mvn -B -q -ntp
BIN      := $(CURDIR)/bin
FUZZTIME ?= 10s
AGENT    := $(BIN)/orderscoring
SHIM_JAR := java-shim/target/flinkgo-shim-0.1.0-SNAPSHOT.jar

# package:FuzzTarget for every decoder that reads bytes from outside.
FUZZ := snapshot:FuzzDecodeSection snapshot:FuzzDecodeMarker \
        statestore:FuzzParseRecordKey statestore:FuzzDecodeRecord statestore:FuzzDecodeValue \
        arrowio:FuzzDecodeBatch bridge:FuzzReadFrame bridge:FuzzControlFrames

.PHONY: all build agent shim test go-check go-test sim fuzz java-test demo bench clean

all: build

build: agent shim

agent:
	$(GO) build ./...
	$(GO) build -o $(AGENT) ./cmd/orderscoring

shim:
	cd java-shim && $(MVN) -DskipTests package

test: go-check go-test sim fuzz java-test
	@echo "make test: all passed"

go-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

go-test:
	$(GO) test -race -short -count=1 ./...

# The full crash simulation (every seed, every crash point), without -race.
sim:
	$(GO) test -count=1 -run 'TestSimulation' ./operator/

fuzz:
	@set -e; for t in $(FUZZ); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$pkg/ >/dev/null; \
	done

java-test: agent
	cd java-shim && $(MVN) verify -Pit -Dflinkgo.binary=$(AGENT)

demo: agent shim
	cd java-shim && $(MVN) -Pdemo test-compile exec:exec -Dflinkgo.binary=$(AGENT)

bench: agent
	benchmarks/run.sh

clean:
	rm -rf $(BIN) java-shim/target
