package io.flinkgo.shim.wire;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.msgpack.value.Value;

/**
 * The control frames of wire protocol v1, one record per frame type, each with a canonical
 * {@code encode()} (keys in protocol.md's order, shortest integer/string/binary forms, the
 * {@code options} map of OPEN sorted by key) and a {@code decode(byte[])} that accepts any
 * integer width, ignores unknown keys and rejects missing required keys with
 * {@code malformed_frame}.
 */
public final class Messages {
    private Messages() {}

    /** Go→JVM: the first frame. */
    public record Hello(long version, String token, String runtime, List<String> agents) {
        public byte[] encode() {
            MsgMap.Writer w = new MsgMap.Writer(4)
                    .putLong("version", version)
                    .putString("token", token)
                    .putString("runtime", runtime)
                    .key("agents")
                    .arrayHeader(agents.size());
            agents.forEach(w::string);
            return w.toByteArray();
        }

        public static Hello decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.HELLO, payload);
            return new Hello(m.getLong("version"), m.getString("token"), m.getString("runtime"), m.getStringList("agents"));
        }
    }

    /** JVM→Go: everything the Go process needs to start the agent. {@code maxFrame} 0 = absent. */
    public record Open(
            String agent,
            Map<String, String> options,
            String jobId,
            String operatorId,
            int subtask,
            int parallelism,
            int maxParallelism,
            int keyGroupStart,
            int keyGroupEnd,
            int attempt,
            byte[] inputSchema,
            long maxFrame,
            boolean outputRefs) {
        /** Without output_refs: the operator takes every output row as a value. */
        public Open(String agent, Map<String, String> options, String jobId, String operatorId, int subtask,
                int parallelism, int maxParallelism, int keyGroupStart, int keyGroupEnd, int attempt,
                byte[] inputSchema, long maxFrame) {
            this(agent, options, jobId, operatorId, subtask, parallelism, maxParallelism, keyGroupStart, keyGroupEnd,
                    attempt, inputSchema, maxFrame, false);
        }

        public byte[] encode() {
            MsgMap.Writer w = new MsgMap.Writer(11 + (maxFrame > 0 ? 1 : 0) + (outputRefs ? 1 : 0)).putString("agent", agent);
            // Sorted by UTF-8 bytes (= code point order; String.compareTo is UTF-16 order) so that
            // identical OPENs are byte-identical on both sides.
            Map<String, String> sorted = new TreeMap<>(Messages::compareCodePoints);
            sorted.putAll(options);
            w.key("options").mapHeader(sorted.size());
            sorted.forEach((k, v) -> w.string(k).string(v));
            w.putString("job_id", jobId)
                    .putString("operator_id", operatorId)
                    .putLong("subtask", subtask)
                    .putLong("parallelism", parallelism)
                    .putLong("max_parallelism", maxParallelism)
                    .putLong("key_group_start", keyGroupStart)
                    .putLong("key_group_end", keyGroupEnd)
                    .putLong("attempt", attempt)
                    .putBinary("input_schema", inputSchema);
            if (maxFrame > 0) {
                w.putLong("max_frame", maxFrame);
            }
            if (outputRefs) {
                w.putBool("output_refs", true);
            }
            return w.toByteArray();
        }

        public static Open decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.OPEN, payload);
            return new Open(
                    m.getString("agent"),
                    m.getStringMap("options"),
                    m.getString("job_id"),
                    m.getString("operator_id"),
                    m.getInt("subtask"),
                    m.getInt("parallelism"),
                    m.getInt("max_parallelism"),
                    m.getInt("key_group_start"),
                    m.getInt("key_group_end"),
                    m.getInt("attempt"),
                    m.getBinary("input_schema"),
                    m.has("max_frame") ? m.getLong("max_frame") : 0L,
                    m.has("output_refs") && m.getBool("output_refs"));
        }
    }

    /** JVM→Go: the stored section of one key group. */
    public record Restore(int keyGroup, byte[] section) {
        public byte[] encode() {
            return new MsgMap.Writer(2).putLong("key_group", keyGroup).putBinary("section", section).toByteArray();
        }

        public static Restore decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.RESTORE, payload);
            return new Restore(m.getInt("key_group"), m.getBinary("section"));
        }
    }

    /** JVM→Go: all recovery markers of the union state (possibly none). */
    public record RestoreDone(List<byte[]> markers) {
        public byte[] encode() {
            MsgMap.Writer w = new MsgMap.Writer(1).key("markers").arrayHeader(markers.size());
            markers.forEach(w::binary);
            return w.toByteArray();
        }

        public static RestoreDone decode(byte[] payload) throws ProtocolException {
            return new RestoreDone(MsgMap.parse(FrameType.RESTORE_DONE, payload).getBinaryList("markers"));
        }
    }

    /** Go→JVM: restore finished; the output schema and the initial credit. */
    public record Ready(byte[] outputSchema, long credit) {
        public byte[] encode() {
            return new MsgMap.Writer(2).putBinary("output_schema", outputSchema).putLong("credit", credit).toByteArray();
        }

        public static Ready decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.READY, payload);
            long credit = m.getLong("credit");
            if (credit < 0) {
                throw MsgMap.malformed("READY", "negative credit " + credit);
            }
            return new Ready(m.getBinary("output_schema"), credit);
        }
    }

    /**
     * Go→JVM: additional rows the JVM may send, and (with OPEN's output_refs) the reference
     * horizon {@code keepFrom}: the input rows numbered below it may be dropped; 0 = absent.
     */
    public record Credit(long rows, long keepFrom) {
        public Credit(long rows) {
            this(rows, 0);
        }

        public byte[] encode() {
            if (keepFrom == 0) {
                return new MsgMap.Writer(1).putLong("rows", rows).toByteArray();
            }
            return new MsgMap.Writer(2).putLong("rows", rows).putLong("keep_from", keepFrom).toByteArray();
        }

        public static Credit decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.CREDIT, payload);
            long rows = m.getLong("rows");
            if (rows < 0) {
                throw MsgMap.malformed("CREDIT", "negative rows " + rows);
            }
            long keep = m.has("keep_from") ? m.getLong("keep_from") : 0;
            if (keep < 0) {
                throw MsgMap.malformed("CREDIT", "negative keep_from " + keep);
            }
            return new Credit(rows, keep);
        }
    }

    /**
     * Go→JVM: output rows that are input rows emitted as they are, by reference: pairs
     * {@code (first, count)} of input row numbers (counted from 0 over all DATA frames), in order.
     */
    public record OutputRef(long[] runs) {
        /** The most runs one OUTPUT_REF may hold. */
        public static final int MAX_RUNS = 1 << 16;

        public byte[] encode() {
            MsgMap.Writer w = new MsgMap.Writer(1).key("runs").arrayHeader(runs.length);
            for (long v : runs) {
                w.longValue(v);
            }
            return w.toByteArray();
        }

        public static OutputRef decode(byte[] payload) throws ProtocolException {
            long[] runs = MsgMap.parse(FrameType.OUTPUT_REF, payload).getLongArray("runs");
            if (runs.length == 0 || runs.length % 2 != 0 || runs.length > 2 * MAX_RUNS) {
                throw MsgMap.malformed("OUTPUT_REF", "runs holds " + runs.length
                        + " integers; it must hold pairs (first, count), 1 to " + MAX_RUNS + " of them");
            }
            for (int i = 0; i < runs.length; i += 2) {
                long first = runs[i];
                long count = runs[i + 1];
                if (first < 0 || count < 1 || count > Integer.MAX_VALUE || first > Long.MAX_VALUE - count) {
                    throw MsgMap.malformed("OUTPUT_REF", "run " + (i / 2) + " (first " + first + ", count " + count
                            + ") is not a run of input rows (first >= 0, 1 <= count <= 2^31-1)");
                }
            }
            return new OutputRef(runs);
        }
    }

    /** JVM→Go (WATERMARK) and Go→JVM (WM_ACK): a watermark timestamp in ms. */
    public record WatermarkTs(long ts) {
        public byte[] encode() {
            return new MsgMap.Writer(1).putLong("ts", ts).toByteArray();
        }

        public static WatermarkTs decode(FrameType type, byte[] payload) throws ProtocolException {
            return new WatermarkTs(MsgMap.parse(type, payload).getLong("ts"));
        }
    }

    /** BARRIER, CHECKPOINT_COMPLETE and CHECKPOINT_ABORTED: a checkpoint id. */
    public record CheckpointId(long checkpointId) {
        public byte[] encode() {
            return new MsgMap.Writer(1).putLong("checkpoint_id", checkpointId).toByteArray();
        }

        public static CheckpointId decode(FrameType type, byte[] payload) throws ProtocolException {
            return new CheckpointId(MsgMap.parse(type, payload).getLong("checkpoint_id"));
        }
    }

    /** One key group's snapshot bytes inside a SNAPSHOT frame. */
    public record Section(int keyGroup, byte[] section) {}

    /**
     * Go→JVM: (part of) the snapshot for a checkpoint. Only the last part ({@code last}) carries
     * the marker; {@code marker} is {@code null} when absent.
     */
    public record Snapshot(long checkpointId, List<Section> sections, byte[] marker, boolean last) {
        public byte[] encode() {
            boolean withMarker = marker != null;
            MsgMap.Writer w = new MsgMap.Writer(withMarker ? 4 : 3)
                    .putLong("checkpoint_id", checkpointId)
                    .key("sections")
                    .arrayHeader(sections.size());
            for (Section s : sections) {
                w.mapHeader(2).putLong("key_group", s.keyGroup()).putBinary("section", s.section());
            }
            if (withMarker) {
                w.putBinary("marker", marker);
            }
            return w.putBool("last", last).toByteArray();
        }

        public static Snapshot decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.SNAPSHOT, payload);
            List<Section> sections = new ArrayList<>();
            for (Value v : m.getArray("sections")) {
                MsgMap s = MsgMap.fromValue("SNAPSHOT section", v);
                sections.add(new Section(s.getInt("key_group"), s.getBinary("section")));
            }
            boolean last = m.getBool("last");
            byte[] marker = m.has("marker") ? m.getBinary("marker") : null;
            if (last && marker == null) {
                throw MsgMap.malformed("SNAPSHOT", "the last part of checkpoint " + m.getLong("checkpoint_id") + " carries no marker");
            }
            return new Snapshot(m.getLong("checkpoint_id"), Collections.unmodifiableList(sections), marker, last);
        }
    }

    /**
     * Go→JVM: the Go process's metrics, name → integer (protocol.md, "METRICS"). The payload is
     * that map itself, encoded with the names sorted by their UTF-8 bytes; a reader ignores names
     * it does not know.
     */
    public record Metrics(Map<String, Long> values) {
        public byte[] encode() {
            Map<String, Long> sorted = new TreeMap<>(Messages::compareCodePoints);
            sorted.putAll(values);
            MsgMap.Writer w = new MsgMap.Writer(sorted.size());
            sorted.forEach(w::putLong);
            return w.toByteArray();
        }

        public static Metrics decode(byte[] payload) throws ProtocolException {
            return new Metrics(MsgMap.parse(FrameType.METRICS, payload).allLongs());
        }
    }

    /** ERROR, either direction: then the sender closes. */
    public record Error(String code, String message) {
        public Error(ErrorCode code, String message) {
            this(code.wire(), message);
        }

        public static Error of(ProtocolException e) {
            return new Error(e.code(), e.detail());
        }

        public byte[] encode() {
            return new MsgMap.Writer(2).putString("code", code).putString("message", message).toByteArray();
        }

        public static Error decode(byte[] payload) throws ProtocolException {
            MsgMap m = MsgMap.parse(FrameType.ERROR, payload);
            return new Error(m.getString("code"), m.getString("message"));
        }
    }

    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    /** The payload of END_INPUT, END_ACK and CLOSE: an empty map. */
    public static byte[] empty() {
        return new byte[] {(byte) 0x80};
    }

    /** Checks that a frame that must carry {@code {}} carries a msgpack map (extra keys ignored). */
    public static void decodeEmpty(FrameType type, byte[] payload) throws ProtocolException {
        MsgMap.parse(type, payload);
    }
}
