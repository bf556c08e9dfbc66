package io.flinkgo.shim.fake;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;

import io.flinkgo.shim.arrow.OutputReader;
import io.flinkgo.shim.arrow.SchemaIO;
import io.flinkgo.shim.arrow.SqlTypeParser;
import io.flinkgo.shim.wire.Frame;
import io.flinkgo.shim.wire.FrameType;
import io.flinkgo.shim.wire.Frames;
import io.flinkgo.shim.wire.Messages;

/**
 * A tiny stand-in for a Go agent binary, speaking protocol v1 from the Go side, for tests that
 * must not depend on the Go build. It mimics the example agent "order-scoring" (same input and
 * output columns): input {@code customer STRING, order_id BIGINT, amount DOUBLE}, output
 * {@code customer, order_id, orders (the customer's inputs so far), avg_amount (= amount),
 * risk (0), flagged (false)}.
 * Inputs finish after {@code FAKE_SLOW_MS} (default 0) in arrival order; a barrier is a cut:
 * unfinished inputs go into the snapshot and run again after a restore.
 *
 * <p>Behaviour switches (environment): FAKE_MODE = ok | bad_token | bad_version | exit_early |
 * error_after | crash_after | bad_output_schema | hang_on_barrier | stray_output_ref; FAKE_N = rows for *_after; FAKE_ONCE_FILE =
 * a file that makes crash_after happen once per test.
 */
public final class FakeGoPeer {
    public static final String OUTPUT =
            "ROW<customer STRING, order_id BIGINT, orders BIGINT, avg_amount DOUBLE, risk DOUBLE, flagged BOOLEAN>";

    static final String MANIFEST = "{\"protocol\":1,\"runtime\":\"fake-java/1\",\"agents\":[{\"name\":\"order-scoring\","
            + "\"actions\":[{\"name\":\"score\",\"listen\":[\"_input_event\"]}],"
            + "\"output\":[{\"name\":\"customer\",\"type\":\"STRING\"},{\"name\":\"order_id\",\"type\":\"BIGINT\"},"
            + "{\"name\":\"orders\",\"type\":\"BIGINT\"},{\"name\":\"avg_amount\",\"type\":\"DOUBLE\"},"
            + "{\"name\":\"risk\",\"type\":\"DOUBLE\"},{\"name\":\"flagged\",\"type\":\"BOOLEAN\"}],"
            + "\"options\":[{\"name\":\"fake.option\",\"default\":\"x\",\"doc\":\"d\"}]}]}";

    private record Input(int kg, byte[] key, String keyString, long v, double amount, Long ts, boolean credited, long due) {}

    private final String mode = System.getenv().getOrDefault("FAKE_MODE", "ok");
    private final long slowMs = Long.parseLong(System.getenv().getOrDefault("FAKE_SLOW_MS", "0"));
    private final long n = Long.parseLong(System.getenv().getOrDefault("FAKE_N", "0"));
    private final RootAllocator alloc = new RootAllocator();
    private final Map<String, Long> counts = new TreeMap<>(); // hex key -> count
    private final Map<String, Integer> keyGroups = new TreeMap<>();
    private final ArrayDeque<Object> queue = new ArrayDeque<>(); // Input | Long (wm) | "END"
    private final List<Object[]> outRows = new ArrayList<>();
    private long credit;
    private long rowsSeen;
    private OutputStream out;

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("describe")) {
            System.out.println(MANIFEST);
            return;
        }
        new FakeGoPeer().run();
    }

    private void run() throws Exception {
        if (mode.equals("exit_early")) {
            System.err.println("fake: cannot start, exiting early");
            System.exit(3);
        }
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(System.getenv("FLINKGO_SOCKET")));
        InputStream in = new java.io.BufferedInputStream(new InputStream() {
            public int read() throws IOException {
                byte[] b = new byte[1];
                return read(b, 0, 1) < 0 ? -1 : b[0] & 0xFF;
            }

            public int read(byte[] b, int off, int len) throws IOException {
                return ch.read(ByteBuffer.wrap(b, off, len));
            }
        });
        out = new OutputStream() {
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            public void write(byte[] b, int off, int len) throws IOException {
                ByteBuffer bb = ByteBuffer.wrap(b, off, len);
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
            }
        };
        String token = mode.equals("bad_token") ? "00".repeat(32) : System.getenv("FLINKGO_TOKEN");
        send(FrameType.HELLO, new Messages.Hello(mode.equals("bad_version") ? 2 : 1, token, "fake-java/1", List.of("order-scoring")).encode());
        Frame open = Frames.read(in, Frames.DEFAULT_MAX_FRAME);
        if (open == null || open.type() != FrameType.OPEN) {
            System.err.println("fake: expected OPEN, got " + open + (open != null && open.type() == FrameType.ERROR
                    ? " " + Messages.Error.decode(open.payload()) : ""));
            System.exit(2);
        }
        Messages.Open o = Messages.Open.decode(open.payload());
        System.err.println("fake: OPEN subtask " + o.subtask() + "/" + o.parallelism() + " key groups "
                + o.keyGroupStart() + ".." + o.keyGroupEnd() + " attempt " + o.attempt() + " options " + o.options().size());
        int restored = 0;
        while (true) {
            Frame f = Frames.read(in, Frames.DEFAULT_MAX_FRAME);
            if (f.type() == FrameType.RESTORE) {
                Messages.Restore r = Messages.Restore.decode(f.payload());
                if (r.keyGroup() < o.keyGroupStart() || r.keyGroup() > o.keyGroupEnd()) {
                    fail("restore_failed", "key group " + r.keyGroup() + " not owned");
                }
                restoreSection(r.keyGroup(), r.section());
                restored++;
            } else if (f.type() == FrameType.RESTORE_DONE) {
                System.err.println("fake: restored " + restored + " sections, " + counts.size() + " keys, "
                        + Messages.RestoreDone.decode(f.payload()).markers().size() + " markers, " + queue.size() + " queued");
                break;
            } else {
                fail("unexpected_frame", "got " + f.type() + " during restore");
            }
        }
        String outType = mode.equals("bad_output_schema") ? "ROW<customer STRING, order_id BIGINT, orders DOUBLE, avg_amount DOUBLE, risk DOUBLE, flagged BOOLEAN>" : OUTPUT;
        credit = 64;
        send(FrameType.READY, new Messages.Ready(SchemaIO.toBytes(OutputReader.outputSchema(SqlTypeParser.parse(outType))), credit).encode());

        BlockingQueue<Object> frames = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try {
                Frame f;
                while ((f = Frames.read(in, Frames.DEFAULT_MAX_FRAME)) != null) {
                    frames.add(f);
                }
            } catch (IOException e) {
                // connection gone
            }
            frames.add("EOF");
        });
        reader.setDaemon(true);
        reader.start();
        while (true) {
            long wait = 1000;
            if (!queue.isEmpty() && queue.peekFirst() instanceof Input) {
                wait = Math.max(0, ((Input) queue.peekFirst()).due - System.currentTimeMillis());
            } else if (!queue.isEmpty()) {
                wait = 0;
            }
            Object item = frames.poll(wait, TimeUnit.MILLISECONDS);
            if ("EOF".equals(item)) {
                System.err.println("fake: connection closed by the operator");
                System.exit(0);
            }
            if (item != null) {
                handle((Frame) item);
            }
            drain();
        }
    }

    private void handle(Frame f) throws Exception {
        switch (f.type()) {
            case DATA: data(f.payload()); break;
            case WATERMARK: queue.add(Messages.WatermarkTs.decode(FrameType.WATERMARK, f.payload()).ts()); break;
            case BARRIER:
                if (!mode.equals("hang_on_barrier")) {
                    long id = Messages.CheckpointId.decode(FrameType.BARRIER, f.payload()).checkpointId();
                    snapshot(id);
                    if (mode.equals("output_after_snapshot")) {
                        // An output of an input after the cut, right behind the SNAPSHOT (as Go
                        // sends the outputs of the actions that finish after the barrier).
                        outRows.add(new Object[] {null, "after-snapshot-" + id, -id, 0L, 0.0});
                        flushOutputs();
                    }
                }
                break;
            case CHECKPOINT_COMPLETE:
            case CHECKPOINT_ABORTED: break;
            case END_INPUT: queue.add("END"); break;
            case CLOSE:
                flushOutputs();
                System.err.println("fake: CLOSE, exiting");
                System.exit(0);
                break;
            case ERROR:
                System.err.println("fake: got ERROR " + Messages.Error.decode(f.payload()));
                System.exit(4);
                break;
            default: fail("unexpected_frame", "fake got " + f.type());
        }
    }

    private void data(byte[] ipc) throws Exception {
        try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(ipc), alloc)) {
            VectorSchemaRoot root = r.getVectorSchemaRoot();
            while (r.loadNextBatch()) {
                IntVector kg = (IntVector) root.getVector("_key_group");
                VarBinaryVector key = (VarBinaryVector) root.getVector("_key");
                BigIntVector ts = (BigIntVector) root.getVector("_ts");
                VarCharVector k = (VarCharVector) root.getVector("customer");
                BigIntVector v = (BigIntVector) root.getVector("order_id");
                org.apache.arrow.vector.Float8Vector amount = (org.apache.arrow.vector.Float8Vector) root.getVector("amount");
                for (int i = 0; i < root.getRowCount(); i++) {
                    rowsSeen++;
                    if (mode.equals("error_after") && rowsSeen > n) {
                        fail("action_failed", "action count failed on purpose after " + n + " rows");
                    }
                    if (mode.equals("crash_after") && rowsSeen > n) {
                        Path once = Path.of(System.getenv("FAKE_ONCE_FILE"));
                        if (!Files.exists(once)) {
                            Files.writeString(once, "crashed");
                            System.err.println("fake: crashing on purpose");
                            Runtime.getRuntime().halt(7);
                        }
                    }
                    queue.add(new Input(kg.get(i), key.get(i), new String(k.get(i), StandardCharsets.UTF_8), v.get(i),
                            amount.get(i), ts.isNull(i) ? null : ts.get(i), true, System.currentTimeMillis() + slowMs));
                }
            }
        }
    }

    private void drain() throws Exception {
        if (mode.equals("stray_output_ref") && rowsSeen > 0) {
            // OUTPUT_REF although OPEN did not offer output_refs (the order-scoring types differ).
            send(FrameType.OUTPUT_REF, new Messages.OutputRef(new long[] {0, 1}).encode());
        }
        long credits = 0;
        while (!queue.isEmpty()) {
            Object head = queue.peekFirst();
            if (head instanceof Input) {
                Input in = (Input) head;
                if (in.due > System.currentTimeMillis()) {
                    break;
                }
                queue.removeFirst();
                String hk = HexFormat.of().formatHex(in.key);
                long c = counts.merge(hk, 1L, Long::sum);
                keyGroups.put(hk, in.kg);
                outRows.add(new Object[] {in.ts, in.keyString, in.v, c, in.amount});
                if (in.credited) {
                    credits++;
                }
            } else if (head instanceof Long) {
                queue.removeFirst();
                flushOutputs();
                send(FrameType.WM_ACK, new Messages.WatermarkTs((Long) head).encode());
            } else {
                queue.removeFirst();
                flushOutputs();
                send(FrameType.END_ACK, new byte[] {(byte) 0x80});
            }
        }
        flushOutputs();
        if (credits > 0) {
            send(FrameType.CREDIT, new Messages.Credit(credits).encode());
        }
    }

    private void flushOutputs() throws Exception {
        if (outRows.isEmpty()) {
            return;
        }
        try (VectorSchemaRoot r = VectorSchemaRoot.create(OutputReader.outputSchema(SqlTypeParser.parse(OUTPUT)), alloc)) {
            for (int i = 0; i < outRows.size(); i++) {
                Object[] row = outRows.get(i);
                if (row[0] == null) {
                    ((BigIntVector) r.getVector(0)).setNull(i);
                } else {
                    ((BigIntVector) r.getVector(0)).setSafe(i, (Long) row[0]);
                }
                ((VarCharVector) r.getVector(1)).setSafe(i, ((String) row[1]).getBytes(StandardCharsets.UTF_8));
                ((BigIntVector) r.getVector(2)).setSafe(i, (Long) row[2]);
                ((BigIntVector) r.getVector(3)).setSafe(i, (Long) row[3]);
                ((org.apache.arrow.vector.Float8Vector) r.getVector(4)).setSafe(i, (Double) row[4]);
                ((org.apache.arrow.vector.Float8Vector) r.getVector(5)).setSafe(i, 0.0);
                ((org.apache.arrow.vector.BitVector) r.getVector(6)).setSafe(i, 0);
            }
            r.setRowCount(outRows.size());
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            try (ArrowStreamWriter w = new ArrowStreamWriter(r, null, b)) {
                w.start();
                w.writeBatch();
                w.end();
            }
            send(FrameType.OUTPUT, b.toByteArray());
        }
        outRows.clear();
    }

    /** A cut: completed counts plus unfinished inputs, per key group; outputs before it are flushed. */
    private void snapshot(long checkpointId) throws Exception {
        flushOutputs();
        Map<Integer, ByteArrayOutputStream> sections = new TreeMap<>();
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            DataOutputStream d = section(sections, keyGroups.get(e.getKey()));
            d.writeByte(1);
            d.writeUTF(e.getKey());
            d.writeLong(e.getValue());
        }
        for (Object o : queue) {
            if (o instanceof Input) {
                Input in = (Input) o;
                DataOutputStream d = section(sections, in.kg);
                d.writeByte(2);
                d.writeUTF(HexFormat.of().formatHex(in.key));
                d.writeUTF(in.keyString);
                d.writeLong(in.v);
                d.writeDouble(in.amount);
                d.writeLong(in.ts == null ? Long.MIN_VALUE : in.ts);
            }
        }
        List<Messages.Section> list = new ArrayList<>();
        sections.forEach((kg, b) -> list.add(new Messages.Section(kg, b.toByteArray())));
        // Two frames when there is more than one section, to exercise split snapshots.
        int half = list.size() / 2;
        if (half > 0) {
            send(FrameType.SNAPSHOT, new Messages.Snapshot(checkpointId, list.subList(0, half), null, false).encode());
        }
        byte[] marker = ("fake-marker-" + checkpointId).getBytes(StandardCharsets.UTF_8);
        send(FrameType.SNAPSHOT, new Messages.Snapshot(checkpointId, list.subList(half, list.size()), marker, true).encode());
        // METRICS after the snapshot, as the Go runtime sends it; with a name the operator does not know.
        if (mode.equals("bad_metrics")) {
            // {"actions_executed": "x"}: a value that is not an integer.
            byte[] name = "actions_executed".getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            b.write(0x81);
            b.write(0xa0 | name.length);
            b.write(name);
            b.write(new byte[] {(byte) 0xa1, 'x'});
            send(FrameType.METRICS, b.toByteArray());
        } else {
            send(FrameType.METRICS, new Messages.Metrics(Map.of("actions_executed", rowsSeen, "fake_future_metric", -1L)).encode());
        }
    }

    private static DataOutputStream section(Map<Integer, ByteArrayOutputStream> m, int kg) {
        return new DataOutputStream(m.computeIfAbsent(kg, k -> new ByteArrayOutputStream()));
    }

    private void restoreSection(int kg, byte[] s) throws IOException {
        DataInputStream d = new DataInputStream(new ByteArrayInputStream(s));
        while (d.available() > 0) {
            int tag = d.readByte();
            String hk = d.readUTF();
            keyGroups.put(hk, kg);
            if (tag == 1) {
                counts.put(hk, d.readLong());
            } else {
                String ks = d.readUTF();
                long v = d.readLong();
                double amount = d.readDouble();
                long ts = d.readLong();
                queue.add(new Input(kg, HexFormat.of().parseHex(hk), ks, v, amount, ts == Long.MIN_VALUE ? null : ts, false,
                        System.currentTimeMillis() + slowMs));
            }
        }
    }

    private void send(FrameType t, byte[] payload) throws IOException {
        Frames.write(out, t, payload);
    }

    private void fail(String code, String message) throws IOException {
        System.err.println("fake: ERROR " + code + ": " + message);
        send(FrameType.ERROR, new Messages.Error(code, message).encode());
        System.exit(1);
    }
}
