package io.flinkgo.shim.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.types.Row;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgentOperator;
import io.flinkgo.shim.GoAgents;

/**
 * The bridge benchmark (benchmarks/bridge): on one MiniCluster, in one run, the same generated
 * keyed rows (id BIGINT, customer STRING from 10k keys, payload STRING; about 200 bytes) go
 * through (i) a Flink {@code map} that copies the row, and (ii) the Go {@code passthrough} agent
 * (cmd/flinkgo-testagent) via {@link GoAgents#connect}, each into a sink that only counts, at
 * each parallelism of {@code bench.parallelism}. Throughput is rows / (last row − first row at the
 * sinks), so job start-up and the Go process start are not counted. The bridge's bytes come from
 * the operator's {@code numBytesToGo}/{@code numBytesFromGo} metrics; RSS of the JVM and of the
 * Go processes is sampled every 100 ms.
 *
 * <p>System properties: {@code flinkgo.testagent} (required), {@code bench.rows} (per run),
 * {@code bench.warmupRows} (per warm-up run of each pipeline; default {@code bench.rows}),
 * {@code bench.payloadChars} (characters of the payload column; default 170),
 * {@code bench.parallelism} (e.g. {@code 1,2}), {@code bench.repeats} (median of; default 3),
 * {@code bench.out} (a Markdown file for the table), {@code bench.profileDir} (if set, every
 * measured bridge run passes {@code go.cpuprofile=<dir>/go-<run>.pprof} to the Go processes),
 * {@code bench.options} (extra agent options for the bridge runs, {@code k=v,k=v}), {@code
 * bench.pipelines} ({@code map,bridge} by default; {@code bridge@k=v;k=v} is the bridge with more
 * agent options, so that two settings alternate in one JVM), {@code bench.order} ({@code rounds}, the
 * default: round r runs each pipeline once, back to back, in alternating order, and the table
 * also gives the ratio per round; {@code blocks}: all runs of one pipeline, then the next),
 * {@code bench.roundBase} (the first round's number in the run names; default 0), {@code
 * bench.runsOut} (a file the measured runs are appended to, one tab-separated line each).
 *
 * <p>{@code bench.report=<file>} makes no runs: it prints (and writes to {@code bench.out}) the
 * table of the runs collected in {@code <file>} by {@code bench.runsOut}, typically from one JVM
 * per pipeline and round, as benchmarks/bridge/run.sh does. One JVM that runs both pipelines
 * slows the map job down once the bridge has run in it (JIT profiles of the code both share):
 * the map job alone ran at 3.7-4.1 M rows/s, after bridge runs in the same JVM at 2.3-3.0 M.
 */
public final class BridgeBench {
    static final int KEYS = 10_000;
    /** Characters of the payload column: 170 (about 200-byte rows) unless bench.payloadChars says. */
    static final int PAYLOAD_CHARS = Integer.getInteger("bench.payloadChars", 170);
    static final RowTypeInfo TYPE = (RowTypeInfo) Types.ROW_NAMED(
            new String[] {"id", "customer", "payload"}, Types.LONG, Types.STRING, Types.STRING);

    private BridgeBench() {}

    /** Generated rows: cheap to make, so the source is not what is measured. */
    static final class Rows {
        static final String[] CUSTOMERS = new String[KEYS];
        static final String[] PAYLOADS = new String[256];

        static {
            for (int i = 0; i < KEYS; i++) {
                CUSTOMERS[i] = String.format(Locale.ROOT, "customer-%05d", i);
            }
            Random rnd = new Random(42);
            char[] c = new char[PAYLOAD_CHARS];
            for (int p = 0; p < PAYLOADS.length; p++) {
                for (int j = 0; j < c.length; j++) {
                    c[j] = (char) ('a' + rnd.nextInt(26));
                }
                PAYLOADS[p] = new String(c);
            }
        }

        static Row row(long i) {
            return Row.of(i, CUSTOMERS[(int) ((i * 7919) % KEYS)], PAYLOADS[(int) (i & 255)]);
        }
    }

    /** The Flink baseline: a new row with the same fields, like the agent's output. */
    static final class CopyRow implements MapFunction<Row, Row> {
        private static final long serialVersionUID = 1L;

        @Override
        public Row map(Row r) {
            return Row.of(r.getField(0), r.getField(1), r.getField(2));
        }
    }

    /** Per run: rows seen and the first and last arrival over all sink subtasks. */
    static final class Timing {
        long rows;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;

        synchronized void add(long n, long f, long l) {
            rows += n;
            first = Math.min(first, f);
            last = Math.max(last, l);
        }
    }

    static final Map<String, Timing> TIMINGS = new ConcurrentHashMap<>();

    /** Discards rows, noting how many arrived and when the first and the last did. */
    static final class TimingSink implements Sink<Row> {
        private static final long serialVersionUID = 1L;
        private final String run;

        TimingSink(String run) {
            this.run = run;
            TIMINGS.put(run, new Timing());
        }

        @Override
        public SinkWriter<Row> createWriter(WriterInitContext context) {
            Timing t = TIMINGS.get(run);
            return new SinkWriter<>() {
                long rows;
                long first;
                long last;

                @Override
                public void write(Row element, Context ctx) {
                    if (rows++ == 0) {
                        first = System.nanoTime();
                    }
                    last = System.nanoTime();
                }

                @Override
                public void flush(boolean endOfInput) {
                    if (endOfInput && rows > 0) {
                        t.add(rows, first, last);
                        rows = 0;
                    }
                }

                @Override
                public void close() {
                    flush(true);
                }
            };
        }
    }

    /** One measured run. */
    record Result(String pipeline, int parallelism, long rows, double seconds, long bytesToGo, long bytesFromGo,
            long goRssPeak, long jvmRssPeak, double goCpu, double jvmCpu) {
        double rowsPerSecond() {
            return rows / seconds;
        }

        double mbPerSecond() {
            return (bytesToGo + bytesFromGo) / seconds / 1e6;
        }
    }

    public static void main(String[] args) throws Exception {
        String report = System.getProperty("bench.report", "");
        if (!report.isBlank()) {
            report(Path.of(report), System.getProperty("bench.out", ""));
            return;
        }
        String binary = System.getProperty("flinkgo.testagent", "");
        if (binary.isBlank() || !Files.isExecutable(Path.of(binary))) {
            throw new IllegalArgumentException("set -Dflinkgo.testagent to the absolute path of bin/flinkgo-testagent; got '" + binary + "'");
        }
        long rows = Long.getLong("bench.rows", 2_000_000);
        int repeats = Integer.getInteger("bench.repeats", 3);
        int[] parallelisms = Arrays.stream(System.getProperty("bench.parallelism", "1,2").split(","))
                .map(String::trim).mapToInt(Integer::parseInt).toArray();
        String out = System.getProperty("bench.out", "");
        boolean rounds = !System.getProperty("bench.order", "rounds").equals("blocks");
        int roundBase = Integer.getInteger("bench.roundBase", 0);
        String runsOut = System.getProperty("bench.runsOut", "");

        InMemoryReporter reporter = InMemoryReporter.createWithRetainedMetrics();
        Configuration conf = reporter.addToConfiguration(new Configuration());
        conf.setString("rest.port", "0");
        for (String kv : System.getProperty("bench.flinkConf", "").split(",")) {
            if (!kv.isBlank()) {
                String[] p = kv.split("=", 2);
                conf.setString(p[0].trim(), p[1].trim());
            }
        }
        int slots = Arrays.stream(parallelisms).max().orElse(1);
        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(slots).build();
        RssSampler sampler = new RssSampler(binary);
        List<Result> results = new ArrayList<>();
        Map<Integer, List<Double>> roundRatios = new java.util.TreeMap<>();
        try (MiniCluster cluster = new MiniCluster(mcc)) {
            cluster.start();
            Thread t = new Thread(sampler, "rss-sampler");
            t.setDaemon(true);
            t.start();
            // Warm-up: JIT for both pipelines; not reported. A run of a fifth of the rows left C2
            // compiling about half a core's worth during the measured runs that followed (JFR
            // jdk.CompilerStatistics), which counted against whichever pipeline has more code.
            long warmup = Math.max(Long.getLong("bench.warmupRows", rows), 10_000);
            List<String> pipelines = new ArrayList<>();
            for (String name : System.getProperty("bench.pipelines", "map,bridge").split(",")) {
                pipelines.add(name.trim());
            }
            // Only what is measured is warmed up: a JVM that runs one pipeline (bench.pipelines=map
            // or =bridge) compiles that pipeline's code alone.
            for (String w : List.of("map", "bridge")) {
                if (pipelines.stream().anyMatch(q -> q.equals(w) || q.startsWith(w + "@"))) {
                    run(cluster, reporter, sampler, binary, w, 1, warmup, "warmup");
                }
            }
            for (int p : parallelisms) {
                Map<String, List<Result>> byPipeline = new java.util.LinkedHashMap<>();
                for (String pipeline : pipelines) {
                    byPipeline.put(pipeline, new ArrayList<>());
                }
                if (rounds) {
                    // Round r runs every pipeline once, back to back, in alternating order: the
                    // machine's speed drifts by 10-40 % from minute to minute, and a ratio of two runs
                    // next to each other moves less than one of two medians taken minutes apart.
                    for (int r = 0; r < repeats; r++) {
                        List<String> order = new ArrayList<>(pipelines);
                        if (r % 2 == 1) {
                            java.util.Collections.reverse(order);
                        }
                        for (String pipeline : order) {
                            byPipeline.get(pipeline).add(run(cluster, reporter, sampler, binary, pipeline, p, rows, "r" + (roundBase + r)));
                        }
                    }
                } else {
                    for (String pipeline : pipelines) {
                        for (int r = 0; r < repeats; r++) {
                            byPipeline.get(pipeline).add(run(cluster, reporter, sampler, binary, pipeline, p, rows, "r" + (roundBase + r)));
                        }
                    }
                }
                if (!runsOut.isBlank()) {
                    appendRuns(Path.of(runsOut), byPipeline.values(), roundBase);
                }
                for (List<Result> rs : byPipeline.values()) {
                    results.add(median(rs));
                }
                List<Result> maps = byPipeline.get("map");
                List<Result> bridges = byPipeline.get("bridge");
                if (maps != null && bridges != null) {
                    List<Double> ratios = new ArrayList<>();
                    for (int r = 0; r < repeats; r++) {
                        ratios.add(bridges.get(r).rowsPerSecond() / maps.get(r).rowsPerSecond());
                    }
                    roundRatios.put(p, ratios);
                }
            }
        }
        String table = table(results, rows, repeats, rounds ? roundRatios : Map.of());
        System.out.println(table);
        if (!out.isBlank()) {
            Files.writeString(Path.of(out), table);
        }
    }

    /**
     * Appends the measured runs, one tab-separated line each (round, then the {@link Result}'s
     * fields), so that runs made in separate JVMs can be put in one table ({@link #report}).
     */
    static void appendRuns(Path file, java.util.Collection<List<Result>> runs, int roundBase) throws IOException {
        StringBuilder b = new StringBuilder();
        for (List<Result> rs : runs) {
            for (int r = 0; r < rs.size(); r++) {
                Result x = rs.get(r);
                b.append(String.format(Locale.ROOT, "%d\t%s\t%d\t%d\t%.9f\t%d\t%d\t%d\t%d\t%.3f\t%.3f%n", roundBase + r,
                        x.pipeline(), x.parallelism(), x.rows(), x.seconds(), x.bytesToGo(), x.bytesFromGo(),
                        x.goRssPeak(), x.jvmRssPeak(), x.goCpu(), x.jvmCpu()));
            }
        }
        Files.writeString(file, b, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    }

    /**
     * {@code bench.report}: the table of runs that {@code bench.runsOut} collected, typically from
     * one JVM per pipeline and round (benchmarks/bridge/run.sh): medians per parallelism and
     * pipeline, and the ratio of the map and bridge runs of each round.
     */
    static void report(Path runs, String out) throws IOException {
        Map<Integer, Map<String, Map<Integer, Result>>> byP = new java.util.TreeMap<>();
        int lineNo = 0;
        for (String line : Files.readAllLines(runs)) {
            lineNo++;
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t");
            if (f.length != 11) {
                throw new IllegalArgumentException(runs + ":" + lineNo + ": want 11 tab-separated fields (as bench.runsOut writes), got " + f.length);
            }
            Result r = new Result(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]), Double.parseDouble(f[4]),
                    Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]), Long.parseLong(f[8]),
                    Double.parseDouble(f[9]), Double.parseDouble(f[10]));
            Result dup = byP.computeIfAbsent(r.parallelism(), k -> new java.util.TreeMap<>((a, b) -> a.equals(b) ? 0 : a.equals("map") ? -1 : b.equals("map") ? 1 : a.compareTo(b)))
                    .computeIfAbsent(r.pipeline(), k -> new java.util.TreeMap<>()).put(Integer.parseInt(f[0]), r);
            if (dup != null) {
                throw new IllegalArgumentException(runs + ":" + lineNo + ": a second run of " + r.pipeline() + " at p=" + r.parallelism() + " in round " + f[0]);
            }
        }
        if (byP.isEmpty()) {
            throw new IllegalArgumentException(runs + " holds no runs");
        }
        List<Result> medians = new ArrayList<>();
        Map<Integer, List<Double>> roundRatios = new java.util.TreeMap<>();
        long rows = 0;
        int repeats = Integer.MAX_VALUE;
        for (Map.Entry<Integer, Map<String, Map<Integer, Result>>> e : byP.entrySet()) {
            for (Map<Integer, Result> rs : e.getValue().values()) {
                medians.add(median(new ArrayList<>(rs.values())));
                repeats = Math.min(repeats, rs.size());
                rows = rs.values().iterator().next().rows();
            }
            Map<Integer, Result> maps = e.getValue().get("map");
            Map<Integer, Result> bridges = e.getValue().get("bridge");
            if (maps != null && bridges != null) {
                List<Double> ratios = new ArrayList<>();
                for (Map.Entry<Integer, Result> m : maps.entrySet()) {
                    Result g = bridges.get(m.getKey());
                    if (g != null) {
                        ratios.add(g.rowsPerSecond() / m.getValue().rowsPerSecond());
                    }
                }
                roundRatios.put(e.getKey(), ratios);
            }
        }
        String table = table(medians, rows, repeats, roundRatios, "a map JVM and a bridge JVM back to back");
        System.out.println(table);
        if (!out.isBlank()) {
            Files.writeString(Path.of(out), table);
        }
    }

    static Result run(MiniCluster cluster, InMemoryReporter reporter, RssSampler sampler, String binary, String pipeline,
            int p, long rows, String tag) throws Exception {
        String name = pipeline.replaceAll("[^A-Za-z0-9.]+", "_") + "-p" + p + "-" + tag;
        String[] variant = pipeline.split("@", 2); // bridge@k=v;k=v: the bridge with more options
        StreamExecutionEnvironment env = new TestStreamEnvironment(cluster, p);
        env.enableCheckpointing(10_000); // a realistic job checkpoints; 10 s keeps it out of the way
        DataGeneratorSource<Row> source = new DataGeneratorSource<>(Rows::row, rows, TYPE);
        KeyedStream<Row, String> keyed = env.fromSource(source, WatermarkStrategy.noWatermarks(), "rows")
                .keyBy(r -> (String) r.getField(1), Types.STRING);
        GoAgentConfig.Builder config = GoAgentConfig.builder().binary(binary).set("go.agent", "passthrough");
        String extra = variant.length > 1 ? "," + variant[1].replace(';', ',') : "";
        for (String kv : (System.getProperty("bench.options", "") + extra).split(",")) {
            if (!kv.isBlank()) {
                String[] p2 = kv.split("=", 2);
                config.set(p2[0].trim(), p2[1].trim());
            }
        }
        String profileDir = System.getProperty("bench.profileDir", "");
        if (!profileDir.isBlank() && !tag.equals("warmup")) {
            config.set("go.cpuprofile", Path.of(profileDir, "go-" + name + ".pprof").toAbsolutePath().toString());
        }
        DataStream<Row> mid = pipeline.equals("map")
                ? keyed.map(new CopyRow()).returns(TYPE).name("copy-row")
                : GoAgents.connect(keyed, config.build());
        mid.sinkTo(new TimingSink(name)).name("timing-sink");

        sampler.reset();
        double jvmCpu0 = RssSampler.cpuSeconds(ProcessHandle.current().pid());
        JobExecutionResult res = env.execute(name);
        double jvmCpu = RssSampler.cpuSeconds(ProcessHandle.current().pid()) - jvmCpu0;
        Timing t = TIMINGS.get(name);
        if (t.rows != rows) {
            throw new IllegalStateException(name + ": " + t.rows + " rows arrived, want " + rows);
        }
        double seconds = (t.last - t.first) / 1e9;
        JobID job = res.getJobID();
        Result r = new Result(pipeline, p, rows, seconds, sum(reporter, job, GoAgentOperator.METRIC_BYTES_TO_GO),
                sum(reporter, job, GoAgentOperator.METRIC_BYTES_FROM_GO), sampler.goPeak(), sampler.jvmPeak(),
                sampler.goCpu(), jvmCpu);
        System.out.printf(Locale.ROOT, "%-22s %9.0f rows/s  %7.1f MB/s over the bridge  %5.2f s  Go RSS %4d MiB  JVM RSS %4d MiB  CPU s: JVM %.1f Go %.1f%n",
                name, r.rowsPerSecond(), r.mbPerSecond(), seconds, r.goRssPeak() >> 20, r.jvmRssPeak() >> 20, jvmCpu, r.goCpu());
        return r;
    }

    static long sum(InMemoryReporter reporter, JobID job, String metric) {
        long n = 0;
        for (Metric m : reporter.findMetrics(job, ".*" + metric).values()) {
            if (m instanceof Counter c) {
                n += c.getCount();
            }
        }
        return n;
    }

    static Result median(List<Result> rs) {
        List<Result> sorted = new ArrayList<>(rs);
        sorted.sort((a, b) -> Double.compare(a.rowsPerSecond(), b.rowsPerSecond()));
        return sorted.get(sorted.size() / 2);
    }

    static String table(List<Result> results, long rows, int repeats, Map<Integer, List<Double>> roundRatios) {
        return table(results, rows, repeats, roundRatios, "a map run and a bridge run back to back");
    }

    static String table(List<Result> results, long rows, int repeats, Map<Integer, List<Double>> roundRatios, String round) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%d rows per run, median of %d runs (by rows/s).%n%n", rows, repeats));
        b.append("| parallelism | pipeline | rows/s | bridge / map | Arrow hop MB/s (to Go + from Go) | bytes/row (to + from) | Go RSS peak (all processes) | JVM RSS peak | CPU s (JVM + Go) |\n");
        b.append("|---|---|---|---|---|---|---|---|---|\n");
        Result map = null;
        for (Result r : results) {
            if (r.pipeline().equals("map")) {
                map = r;
            }
            boolean bridge = r.pipeline().startsWith("bridge");
            b.append(String.format(Locale.ROOT, "| %d | %s | %,.0f | %s | %s | %s | %s | %d MiB | %.1f + %.1f |%n",
                    r.parallelism(), !bridge ? "Flink map" : r.pipeline().equals("bridge") ? "Go passthrough (bridge)"
                            : "Go passthrough (bridge, " + r.pipeline().substring("bridge@".length()) + ")",
                    r.rowsPerSecond(),
                    bridge && map != null ? String.format(Locale.ROOT, "**%.2f**", r.rowsPerSecond() / map.rowsPerSecond()) : "",
                    bridge ? String.format(Locale.ROOT, "%.1f (%.1f + %.1f)", r.mbPerSecond(),
                            r.bytesToGo() / r.seconds() / 1e6, r.bytesFromGo() / r.seconds() / 1e6) : "",
                    bridge ? String.format(Locale.ROOT, "%.0f + %.0f", (double) r.bytesToGo() / r.rows(), (double) r.bytesFromGo() / r.rows()) : "",
                    bridge ? (r.goRssPeak() >> 20) + " MiB" : "",
                    r.jvmRssPeak() >> 20, r.jvmCpu(), r.goCpu()));
        }
        b.append("\nTargets (DESIGN.md §7 and the benchmark's brief), per parallelism:\n\n");
        for (int i = 0; i + 1 < results.size(); i++) {
            Result m = results.get(i);
            Result g = results.get(i + 1);
            if (!m.pipeline().equals("map") || !g.pipeline().equals("bridge") || m.parallelism() != g.parallelism()) {
                continue;
            }
            double ratio = g.rowsPerSecond() / m.rowsPerSecond();
            double perSubtask = g.mbPerSecond() / g.parallelism();
            b.append(String.format(Locale.ROOT, "- p=%d: bridge/map %.2f, target >= 0.5: %s; Arrow hop %.0f MB/s per subtask, target >= 1000: %s%n",
                    g.parallelism(), ratio, verdict(ratio, 0.5), perSubtask, verdict(perSubtask, 1000)));
            List<Double> rr = roundRatios.get(g.parallelism());
            if (rr != null && !rr.isEmpty()) {
                List<Double> sorted = new ArrayList<>(rr);
                sorted.sort(null);
                StringBuilder each = new StringBuilder();
                for (double x : rr) {
                    each.append(each.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", x));
                }
                double med = sorted.get(sorted.size() / 2);
                b.append(String.format(Locale.ROOT, "  - per round (%s): %s; median %.2f: %s%n",
                        round, each, med, verdict(med, 0.5)));
            }
        }
        return b.toString();
    }

    static String verdict(double got, double target) {
        return got >= target ? "met" : String.format(Locale.ROOT, "**missed by %.0f%%** (%.1fx short)", 100 * (1 - got / target), target / got);
    }

    /** Samples VmRSS of this JVM and of its Go agent processes (and the Go processes' CPU time). */
    static final class RssSampler implements Runnable {
        private final String binary;
        private volatile long goPeak;
        private volatile long jvmPeak;
        private final Map<Long, Double> goCpu = new ConcurrentHashMap<>();

        RssSampler(String binary) {
            // The command line starts with the executable's real path (/proc/<pid>/exe), not
            // with the path the job was given (which may hold "..", or a symlink).
            String real;
            try {
                real = Path.of(binary).toRealPath().toString();
            } catch (java.io.IOException e) {
                real = Path.of(binary).toAbsolutePath().normalize().toString();
            }
            this.binary = real;
        }

        void reset() {
            goPeak = 0;
            jvmPeak = 0;
            goCpu.clear();
        }

        long goPeak() {
            return goPeak;
        }

        long jvmPeak() {
            return jvmPeak;
        }

        double goCpu() {
            return goCpu.values().stream().mapToDouble(Double::doubleValue).sum();
        }

        @Override
        public void run() {
            List<Long> goPids = List.of();
            for (long n = 0; ; n++) {
                jvmPeak = Math.max(jvmPeak, rss(ProcessHandle.current().pid()));
                // Finding the Go processes walks all of /proc (descendants() reads every process's
                // parent): done ten times a second, this thread took 2-3 % of a CPU from the
                // jobs. Once a second is soon enough; a Go process runs for the whole job.
                if (n % 10 == 0) {
                    goPids = goProcesses();
                }
                long go = 0;
                for (long pid : goPids) {
                    go += rss(pid);
                    double cpu = cpuSeconds(pid);
                    if (cpu > 0) {
                        goCpu.merge(pid, cpu, Math::max);
                    }
                }
                goPeak = Math.max(goPeak, go);
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private List<Long> goProcesses() {
            List<Long> pids = new ArrayList<>();
            for (ProcessHandle h : ProcessHandle.current().descendants().toList()) {
                String cmd = h.info().commandLine().orElse("");
                if (cmd.startsWith(binary) && !cmd.contains(" describe")) {
                    pids.add(h.pid());
                }
            }
            return pids;
        }

        static long rss(long pid) {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process is gone
            }
            return 0;
        }

        /** utime + stime of a process, in seconds (assumes 100 clock ticks per second). */
        static double cpuSeconds(long pid) {
            try {
                String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
            } catch (IOException | RuntimeException e) {
                return 0;
            }
        }
    }
}
