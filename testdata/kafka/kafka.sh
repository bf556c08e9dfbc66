#!/usr/bin/env bash
# Runs a real Apache Kafka 4.x broker (KRaft, combined broker + controller) on
# 127.0.0.1 for the tests of the Kafka action-state store. Needs only java (17+)
# and mvn; the broker's jars come from Maven Central (pom.xml beside this file)
# into a cache directory, once.
#
#   testdata/kafka/kafka.sh start    fetch (once), format, start; prints the bootstrap address
#   testdata/kafka/kafka.sh stop     stop (TERM, then KILL after 30 s) and remove the data
#   testdata/kafka/kafka.sh status   prints the address and exits 0 if running, else exits 3
#
# All three are idempotent. Environment:
#   KAFKA_PORT             client port (default 19092); the controller uses KAFKA_PORT+1
#   KAFKA_CONTROLLER_PORT  controller port (default KAFKA_PORT+1)
#   KAFKA_HEAP             JVM heap options (default "-Xms128m -Xmx512m")
#   KAFKA_START_TIMEOUT    seconds to wait for the port (default 90)
#   KAFKA_STATE_DIR        pid file, config, log and data (default ${TMPDIR:-/tmp}/flinkgo-kafka-$KAFKA_PORT)
#   FLINKGO_CACHE          jar cache root (default $HOME/.cache/flinkgo)
#   MVN                    maven command (default "mvn -q -B -ntp -Dstyle.color=never")
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${KAFKA_PORT:-19092}"
cport="${KAFKA_CONTROLLER_PORT:-$((port + 1))}"
heap="${KAFKA_HEAP:--Xms128m -Xmx512m}"
timeout="${KAFKA_START_TIMEOUT:-90}"
state="${KAFKA_STATE_DIR:-${TMPDIR:-/tmp}/flinkgo-kafka-$port}"
mvn_cmd="${MVN:-mvn -q -B -ntp -Dstyle.color=never}"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")"
lib="${FLINKGO_CACHE:-$HOME/.cache/flinkgo}/kafka-$version/lib"
pidfile="$state/kafka.pid"
addr="127.0.0.1:$port"

log() { echo "kafka.sh: $*" >&2; }

running() {
	[[ -f "$pidfile" ]] || return 1
	local pid
	pid="$(cat "$pidfile")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

fetch() {
	if [[ -f "$lib/.complete" ]]; then
		return
	fi
	command -v java >/dev/null || { log "java not found: install a JDK 17 or newer"; exit 1; }
	command -v mvn >/dev/null || { log "mvn not found: install Maven"; exit 1; }
	log "fetching Apache Kafka $version and its dependencies into $lib (once)"
	mkdir -p "$lib"
	# shellcheck disable=SC2086
	(cd "$here" && $mvn_cmd -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib") >&2
	touch "$lib/.complete"
}

# storage_tool prints the StorageTool class this Kafka version has.
storage_tool() {
	local jar
	for jar in "$lib"/kafka_2.13-*.jar "$lib"/kafka-tools-*.jar; do
		[[ -f "$jar" ]] || continue
		if unzip -l "$jar" 2>/dev/null | grep -q 'kafka/tools/StorageTool.class'; then
			echo kafka.tools.StorageTool
			return
		fi
		if unzip -l "$jar" 2>/dev/null | grep -q 'org/apache/kafka/tools/StorageTool.class'; then
			echo org.apache.kafka.tools.StorageTool
			return
		fi
	done
	echo kafka.tools.StorageTool
}

write_config() {
	mkdir -p "$state/data"
	cat >"$state/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$state/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
delete.topic.enable=true
num.network.threads=2
num.io.threads=2
background.threads=2
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=16777216
EOF
	cat >"$state/log4j2.properties" <<EOF
rootLogger.level=WARN
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=kafka.server.KafkaRaftServer
logger.kafka.level=INFO
EOF
}

# java_cmd runs a short-lived Kafka tool.
java_cmd() {
	java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$state/log4j2.properties" -cp "$lib/*" "$@"
}

start() {
	if running; then
		echo "$addr"
		return
	fi
	if port_open "$port"; then
		log "port $port is in use by another process; set KAFKA_PORT to a free port"
		exit 1
	fi
	fetch
	rm -rf "$state"
	write_config
	local cluster_id
	# A base64url id that starts with "-" reads as an option to kafka-storage
	# (one start in 64 failed with "--cluster-id: expected one argument").
	cluster_id="-"
	while [ "${cluster_id#-}" != "$cluster_id" ]; do
		cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
	done
	java_cmd "$(storage_tool)" format -t "$cluster_id" -c "$state/server.properties" \
		>"$state/format.log" 2>&1 || { cat "$state/format.log" >&2; log "formatting $state/data failed"; exit 1; }
	# setsid: the broker outlives the shell (and process group) that started it.
	# shellcheck disable=SC2086
	setsid nohup java $heap -XX:+UseSerialGC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$state/log4j2.properties" \
		-cp "$lib/*" kafka.Kafka "$state/server.properties" >"$state/kafka.log" 2>&1 </dev/null &
	echo $! >"$pidfile"
	local waited=0
	until port_open "$port"; do
		if ! running; then
			tail -n 40 "$state/kafka.log" >&2 || true
			log "the broker exited during startup; its log is $state/kafka.log"
			exit 1
		fi
		if ((waited >= timeout * 2)); then
			tail -n 40 "$state/kafka.log" >&2 || true
			log "port $port did not open within ${timeout}s; stopping the broker"
			stop
			exit 1
		fi
		sleep 0.5
		waited=$((waited + 1))
	done
	log "Apache Kafka $version (KRaft) running, pid $(cat "$pidfile"), data in $state"
	echo "$addr"
}

stop() {
	if running; then
		local pid i
		pid="$(cat "$pidfile")"
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 60; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "broker pid $pid did not stop within 30s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			for ((i = 0; i < 20; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.25
			done
		fi
		log "stopped broker pid $pid"
	fi
	rm -rf "$state"
}

status() {
	if running; then
		echo "$addr"
		return 0
	fi
	echo "not running" >&2
	return 3
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
