package io.flinkgo.shim.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.types.Row;

import io.flinkgo.shim.GoAgentOptions;
import io.flinkgo.shim.arrow.BatchWriter;
import io.flinkgo.shim.arrow.OutputReader;
import io.flinkgo.shim.arrow.SchemaIO;
import io.flinkgo.shim.arrow.TypeMapping;
import io.flinkgo.shim.runtime.Channel;
import io.flinkgo.shim.runtime.GoSession;
import io.flinkgo.shim.wire.Frame;
import io.flinkgo.shim.wire.FrameType;
import io.flinkgo.shim.wire.Frames;
import io.flinkgo.shim.wire.Messages;

/**
 * The Arrow hop JVM→Go→JVM on its own, without Flink's network stack: the shim's own {@link
 * BatchWriter} and {@link OutputReader}, its {@link GoSession} (process, Unix socket, handshake,
 * reader thread), and the real test agent ({@code passthrough}, inline), driven the way {@code
 * GoAgentOperator} drives them: append rows, send a DATA frame when {@code go.batch.size} rows or
 * {@code go.batch.bytes} are reached or credit runs out, wait for CREDIT, decode every OUTPUT
 * frame into Rows. Only Flink's keyBy channel (serialising, shipping and deserialising every row
 * between the source and the operator) and the operator chain are missing; in a job they cost as
 * much as the hop or more (benchmarks/bridge/README.md).
 *
 * <p>Rows are (id BIGINT, customer STRING from 10k keys, payload STRING of {@code
 * hop.payloads} characters), built beforehand. MB/s = (DATA + OUTPUT frame bytes, headers
 * included) / (first DATA sent → last OUTPUT row decoded), as the operator's {@code
 * numBytesToGo}/{@code numBytesFromGo} count them. CPU: the JVM process (JIT and GC included), the
 * JVM's driving thread alone (the operator's task thread), and the Go process.
 *
 * <p>System properties: {@code flinkgo.testagent} (required), {@code hop.payloads} (payload
 * characters per run, default {@code 170,1000,4000,16000}), {@code hop.bytes} (input bytes per
 * run, default 1 GB), {@code hop.repeats} (median of; default 3), {@code hop.maxWarmups} (default 8)
 * and {@code hop.settledJit} (default 0.1: warm-up runs go on until one spends at most this share
 * of its time compiling), {@code hop.options} (agent
 * options {@code k=v,k=v}), {@code hop.socketBuffer} (the operator's socket send buffer in bytes, 0 for
 * the system's default; default that of {@code go.socket.buffer.bytes}), {@code hop.out} (a Markdown
 * file for the table).
 */
public final class HopBench {
    private HopBench() {}

    record Result(int payloadChars, long rows, double seconds, long bytesToGo, long bytesFromGo, double jvmCpu,
            double goCpu, double taskCpu, long jitMs) {
        double mbPerSecond() {
            return (bytesToGo + bytesFromGo) / seconds / 1e6;
        }

        double rowsPerSecond() {
            return rows / seconds;
        }
    }

    public static void main(String[] args) throws Exception {
        String binary = System.getProperty("flinkgo.testagent", "");
        if (binary.isBlank() || !Files.isExecutable(Path.of(binary))) {
            throw new IllegalArgumentException("set -Dflinkgo.testagent to the absolute path of bin/flinkgo-testagent; got '" + binary + "'");
        }
        int[] payloads = Arrays.stream(System.getProperty("hop.payloads", "170,1000,4000,16000").split(","))
                .map(String::trim).mapToInt(Integer::parseInt).toArray();
        long bytes = Long.getLong("hop.bytes", 1_000_000_000L);
        int repeats = Integer.getInteger("hop.repeats", 3);
        int maxWarmups = Integer.getInteger("hop.maxWarmups", 8);
        double settledJit = Double.parseDouble(System.getProperty("hop.settledJit", "0.1"));
        Map<String, String> options = new java.util.TreeMap<>();
        for (String kv : System.getProperty("hop.options", "").split(",")) {
            if (!kv.isBlank()) {
                String[] p = kv.split("=", 2);
                options.put(p[0].trim(), p[1].trim());
            }
        }
        List<Result> results = new ArrayList<>();
        for (int pc : payloads) {
            long rows = Math.max(10_000, bytes / (pc + 40));
            // JIT, and the Go process's first allocations. One warm-up was not always enough: the
            // first measured run could still spend 1.5 CPU-s more in the JVM, compiling, and come
            // out 30 % slower than the next two (benchmarks/bridge/HISTORY.md, "The twenty-fifth session").
            for (int w = 0; w < maxWarmups; w++) {
                Result r = run(binary, options, pc, rows, "warmup" + w);
                if (r.jitMs() <= settledJit * r.seconds() * 1000) {
                    break;
                }
            }
            List<Result> rs = new ArrayList<>();
            for (int r = 0; r < repeats; r++) {
                rs.add(run(binary, options, pc, rows, "r" + r));
            }
            rs.sort(Comparator.comparingDouble(Result::mbPerSecond));
            results.add(rs.get(rs.size() / 2));
        }
        StringBuilder t = new StringBuilder();
        t.append("| payload chars | bytes/row (to + from) | rows/s | Arrow hop MB/s (to Go + from Go) | CPU s per GB (JVM + Go) | of which the JVM's driving thread |\n");
        t.append("|---:|---:|---:|---:|---:|---:|\n");
        for (Result r : results) {
            double gb = (r.bytesToGo + r.bytesFromGo) / 1e9;
            t.append(String.format(Locale.ROOT, "| %d | %d + %d | %,.0f | **%.0f** (%.0f + %.0f) | %.2f + %.2f | %.2f |%n",
                    r.payloadChars, r.bytesToGo / r.rows, r.bytesFromGo / r.rows, r.rowsPerSecond(), r.mbPerSecond(),
                    r.bytesToGo / r.seconds / 1e6, r.bytesFromGo / r.seconds / 1e6, r.jvmCpu / gb, r.goCpu / gb,
                    r.taskCpu / gb));
        }
        System.out.println(t);
        String out = System.getProperty("hop.out", "");
        if (!out.isBlank()) {
            Files.writeString(Path.of(out), t.toString());
        }
    }

    static Result run(String binary, Map<String, String> options, int payloadChars, long rows, String tag) throws Exception {
        var fields = TypeMapping.inputFields(BridgeBench.TYPE);
        String[] customers = new String[BridgeBench.KEYS];
        byte[][] keys = new byte[customers.length][];
        int[] keyGroups = new int[customers.length];
        DataOutputSerializer ks = new DataOutputSerializer(32);
        for (int i = 0; i < customers.length; i++) {
            customers[i] = String.format(Locale.ROOT, "customer-%05d", i);
            ks.clear();
            StringSerializer.INSTANCE.serialize(customers[i], ks);
            keys[i] = ks.getCopyOfBuffer();
            keyGroups[i] = KeyGroupRangeAssignment.assignToKeyGroup(customers[i], 128);
        }
        Row[] inputs = new Row[4096];
        Random rnd = new Random(42);
        char[] c = new char[payloadChars];
        for (int i = 0; i < inputs.length; i++) {
            for (int j = 0; j < c.length; j++) {
                c[j] = (char) ('a' + rnd.nextInt(26));
            }
            inputs[i] = Row.of((long) i, customers[(i * 7919) % customers.length], new String(c));
        }
        int batchRows = Integer.parseInt(options.getOrDefault("go.batch.size", String.valueOf(GoAgentOptions.GO_BATCH_SIZE.defaultValue())));
        long batchBytes = Long.parseLong(options.getOrDefault("go.batch.bytes", String.valueOf(1L << 20)));

        try (RootAllocator alloc = new RootAllocator(1L << 30);
                BatchWriter batch = new BatchWriter(alloc, 512L << 20, fields);
                OutputReader outputs = new OutputReader(alloc, 512L << 20, TypeMapping.rowType(fields))) {
            Messages.Open open = new Messages.Open("passthrough", options, "hop-bench", "hop", 0, 1, 128, 0, 127, 0,
                    batch.schemaBytes(), 0);
            GoSession s = GoSession.start(new GoSession.StartSpec(binary, "[hop]", Path.of(System.getProperty("java.io.tmpdir")),
                    open, List.of(), List.of(), 30_000, null,
                    Integer.getInteger("hop.socketBuffer", (int) (long) GoAgentOptions.GO_SOCKET_BUFFER_BYTES.defaultValue())));
            try {
                outputs.checkSchema(SchemaIO.fromBytes(s.ready().outputSchema()));
                LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
                // As the operator does; -Dhop.payloadPool=false gives every OUTPUT frame a new array.
                io.flinkgo.shim.wire.PayloadPool pool = Boolean.parseBoolean(System.getProperty("hop.payloadPool", "true"))
                        ? new io.flinkgo.shim.wire.PayloadPool(4, 4 << 20) : null;
                s.startReader(pool, inbox::add, inbox::add);
                long credit = s.ready().credit();
                long[] received = {0};
                long[] fromGo = {0};
                long toGo = 0;
                long sent = 0;
                var parts = new java.util.ArrayList<java.nio.ByteBuffer>(64);
                double jvm0 = BridgeBench.RssSampler.cpuSeconds(ProcessHandle.current().pid());
                double go0 = BridgeBench.RssSampler.cpuSeconds(s.process().pid());
                java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
                long task0 = threads.getCurrentThreadCpuTime();
                long readerId = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("flinkgo-reader")).mapToLong(Thread::getId).findFirst().orElse(-1);
                long reader0 = readerId < 0 ? 0 : threads.getThreadCpuTime(readerId);
                java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
                long jit0 = jit.getTotalCompilationTime();
                long start = System.nanoTime();
                boolean ended = false;
                while (!ended) {
                    Object item = null;
                    if (sent < rows && credit > 0) {
                        item = inbox.poll();
                    } else if (sent == rows && received[0] == rows) {
                        s.channel().send(FrameType.END_INPUT, Messages.empty());
                        toGo += Frames.HEADER_BYTES;
                        sent++; // END_INPUT sent
                        continue;
                    } else {
                        item = inbox.take();
                    }
                    if (item == null) {
                        // Append rows as processElement does, then send the batch.
                        while (sent < rows && credit > 0 && batch.rows() < batchRows && batch.bytes() < batchBytes) {
                            int k = (int) ((sent * 7919) % customers.length);
                            batch.append(keyGroups[k], keys[k], false, 0, inputs[(int) (sent & 4095)]);
                            sent++;
                            credit--;
                        }
                        parts.clear();
                        batch.finishGathered(parts);
                        long len = Channel.length(parts);
                        s.channel().sendGathered(FrameType.DATA, parts, len);
                        toGo += Frames.HEADER_BYTES + len;
                        batch.reset();
                        continue;
                    }
                    if (item instanceof Throwable e) {
                        throw new IllegalStateException("the connection to the Go process ended", e);
                    }
                    Frame f = (Frame) item;
                    fromGo[0] += Frames.HEADER_BYTES + f.length();
                    switch (f.type()) {
                        case CREDIT -> credit += Messages.Credit.decode(f.payload()).rows();
                        case OUTPUT -> {
                            received[0] += outputs.read(f.payload(), f.length(), (ts, row) -> {
                                if (row.getArity() != 3) {
                                    throw new IllegalStateException("output row " + row);
                                }
                            });
                            if (pool != null) {
                                pool.give(f.payload());
                            }
                        }
                        case END_ACK -> ended = true;
                        case METRICS -> { }
                        case ERROR -> throw new IllegalStateException("Go reported " + Messages.Error.decode(f.payload()).message());
                        default -> throw new IllegalStateException("unexpected " + f.type());
                    }
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                long jitMs = jit.getTotalCompilationTime() - jit0;
                double jvmCpu = BridgeBench.RssSampler.cpuSeconds(ProcessHandle.current().pid()) - jvm0;
                double goCpu = BridgeBench.RssSampler.cpuSeconds(s.process().pid()) - go0;
                double taskCpu = (threads.getCurrentThreadCpuTime() - task0) / 1e9;
                double readerCpu = readerId < 0 ? Double.NaN : (threads.getThreadCpuTime(readerId) - reader0) / 1e9;
                if (received[0] != rows) {
                    throw new IllegalStateException(received[0] + " rows came back, want " + rows);
                }
                Result r = new Result(payloadChars, rows, seconds, toGo, fromGo[0], jvmCpu, goCpu, taskCpu, jitMs);
                System.out.printf(Locale.ROOT, "hop-%d-%-7s %9.0f rows/s %8.1f MB/s (to Go %.0f + from Go %.0f)  %5.2f s  CPU s: JVM %.1f (driving thread %.1f, reader thread %.2f) Go %.1f  JIT %d ms%n",
                        payloadChars, tag, r.rowsPerSecond(), r.mbPerSecond(), toGo / seconds / 1e6, fromGo[0] / seconds / 1e6,
                        seconds, jvmCpu, taskCpu, readerCpu, goCpu, jitMs);
                return r;
            } finally {
                s.close(true, 10_000);
            }
        }
    }
}
