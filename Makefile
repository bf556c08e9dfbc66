# flinkgo — the front door.
#   make demo   a real Flink job (MiniCluster) feeding generated orders through the Go example agent
#   make test   every Go and Java test, short fuzz runs, the crash simulation
#   make bench  benchmarks (figures go to benchmarks/)

GO       ?= go
MVN      ?= mvn -B -q -ntp
BIN      := $(CURDIR)/bin
FUZZTIME ?= 10s
AGENT    := $(BIN)/orderscoring
TESTAGENT := $(BIN)/flinkgo-testagent
# Fixtures for the Java bad-setup tests; built by path (./... skips testdata).
FIXTURES := badversion badtoken
SHIM_JAR := java-shim/target/flinkgo-shim-0.1.0-SNAPSHOT.jar

# package:FuzzTarget for every decoder that reads bytes from outside.
FUZZ := snapshot:FuzzDecodeSection snapshot:FuzzDecodeMarker \
        statestore:FuzzParseRecordKey statestore:FuzzDecodeRecord statestore:FuzzDecodeValue \
        statestore:FuzzDecodeControl \
        arrowio:FuzzDecodeBatch bridge:FuzzReadFrame bridge:FuzzControlFrames

.PHONY: all build agent shim test go-check go-test sim fuzz java-test demo bench clean

all: build

build: agent shim

agent:
	$(GO) build ./...
	$(GO) build -o $(AGENT) ./cmd/orderscoring
	$(GO) build -o $(TESTAGENT) ./cmd/flinkgo-testagent
	@set -e; for f in $(FIXTURES); do $(GO) build -o $(BIN)/$$f ./testdata/fixtures/$$f; done

shim:
	cd java-shim && $(MVN) -DskipTests package

test: go-check go-test sim fuzz java-test
	@echo "make test: all passed"

go-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./... ./testdata/fixtures/...

# Go tests, with a real Kafka broker (KRaft, from Maven Central jars) on
# 127.0.0.1 for the action-state store's guarantees; stopped afterwards.
KAFKA := $(CURDIR)/testdata/kafka/kafka.sh
go-test:
	@set -e; addr=$$($(KAFKA) start); trap '$(KAFKA) stop >/dev/null 2>&1 || true' EXIT; \
	  echo "Kafka broker at $$addr"; \
	  FLINKGO_KAFKA=$$addr FLINKGO_KAFKA_SCRIPT=$(KAFKA) $(GO) test -race -short -count=1 ./...

# The full crash simulation (every seed, every crash point), without -race.
sim:
	$(GO) test -count=1 -run 'TestSimulation' ./operator/

fuzz:
	@set -e; for t in $(FUZZ); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$pkg/ >/dev/null; \
	done

JAVA_IT_PROPS := -Dflinkgo.binary=$(AGENT) -Dflinkgo.testagent=$(TESTAGENT) \
	-Dflinkgo.fixture.badversion=$(BIN)/badversion -Dflinkgo.fixture.badtoken=$(BIN)/badtoken

java-test: agent
	cd java-shim && $(MVN) verify -Pit $(JAVA_IT_PROPS)

demo: agent shim
	cd java-shim && $(MVN) -Pdemo test-compile exec:exec -Dflinkgo.binary=$(AGENT)

bench: agent
	benchmarks/run.sh

clean:
	rm -rf $(BIN) java-shim/target
