package io.flinkgo.shim.wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueType;

/**
 * The decoded msgpack map of a control frame, with typed getters that fail with
 * {@code malformed_frame} naming the frame and the key. Unknown keys are kept and ignored
 * (forward compatibility); a non-string key, a duplicate key or trailing bytes are malformed.
 */
final class MsgMap {
    private final String frame;
    private final Map<String, Value> entries;

    private MsgMap(String frame, Map<String, Value> entries) {
        this.frame = frame;
        this.entries = entries;
    }

    static MsgMap parse(FrameType type, byte[] payload) throws ProtocolException {
        return parse(type.name(), payload);
    }

    static MsgMap parse(String frame, byte[] payload) throws ProtocolException {
        Value v;
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            v = u.unpackValue();
            if (u.hasNext()) {
                throw malformed(frame, "trailing bytes after the msgpack map");
            }
        } catch (MessagePackException | IOException e) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, frame + ": payload is not msgpack: " + e.getMessage(), e);
        }
        return fromValue(frame, v);
    }

    static MsgMap fromValue(String frame, Value v) throws ProtocolException {
        if (v.getValueType() != ValueType.MAP) {
            throw malformed(frame, "payload is a msgpack " + v.getValueType() + ", want a map");
        }
        Map<String, Value> m = new LinkedHashMap<>();
        for (Map.Entry<Value, Value> e : v.asMapValue().entrySet()) {
            if (!e.getKey().isStringValue()) {
                throw malformed(frame, "map key " + e.getKey() + " is not a string");
            }
            String k = e.getKey().asStringValue().asString();
            if (m.put(k, e.getValue()) != null) {
                throw malformed(frame, "duplicate key " + k);
            }
        }
        return new MsgMap(frame, m);
    }

    static ProtocolException malformed(String frame, String what) {
        return new ProtocolException(ErrorCode.MALFORMED_FRAME, frame + ": " + what);
    }

    boolean has(String key) {
        Value v = entries.get(key);
        return v != null && !v.isNilValue();
    }

    private Value require(String key, ValueType want) throws ProtocolException {
        Value v = entries.get(key);
        if (v == null) {
            throw malformed(frame, "missing required key " + key);
        }
        if (v.getValueType() != want) {
            throw malformed(frame, "key " + key + " is a " + v.getValueType() + ", want " + want);
        }
        return v;
    }

    long getLong(String key) throws ProtocolException {
        Value v = require(key, ValueType.INTEGER);
        if (!v.asIntegerValue().isInLongRange()) {
            throw malformed(frame, "key " + key + " is out of the int64 range");
        }
        return v.asIntegerValue().toLong();
    }

    int getInt(String key) throws ProtocolException {
        long l = getLong(key);
        if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
            throw malformed(frame, "key " + key + " = " + l + " is out of the int32 range");
        }
        return (int) l;
    }

    String getString(String key) throws ProtocolException {
        return require(key, ValueType.STRING).asStringValue().asString();
    }

    byte[] getBinary(String key) throws ProtocolException {
        return require(key, ValueType.BINARY).asBinaryValue().asByteArray();
    }

    boolean getBool(String key) throws ProtocolException {
        return require(key, ValueType.BOOLEAN).asBooleanValue().getBoolean();
    }

    List<Value> getArray(String key) throws ProtocolException {
        return require(key, ValueType.ARRAY).asArrayValue().list();
    }

    long[] getLongArray(String key) throws ProtocolException {
        List<Value> vs = getArray(key);
        long[] out = new long[vs.size()];
        for (int i = 0; i < out.length; i++) {
            Value v = vs.get(i);
            if (!v.isIntegerValue() || !v.asIntegerValue().isInLongRange()) {
                throw malformed(frame, "key " + key + " holds a " + v.getValueType() + " at " + i + ", want 64-bit integers");
            }
            out[i] = v.asIntegerValue().toLong();
        }
        return out;
    }

    List<String> getStringList(String key) throws ProtocolException {
        List<String> out = new ArrayList<>();
        for (Value v : getArray(key)) {
            if (!v.isStringValue()) {
                throw malformed(frame, "key " + key + " holds a " + v.getValueType() + ", want strings");
            }
            out.add(v.asStringValue().asString());
        }
        return Collections.unmodifiableList(out);
    }

    List<byte[]> getBinaryList(String key) throws ProtocolException {
        List<byte[]> out = new ArrayList<>();
        for (Value v : getArray(key)) {
            if (!v.isBinaryValue()) {
                throw malformed(frame, "key " + key + " holds a " + v.getValueType() + ", want binaries");
            }
            out.add(v.asBinaryValue().asByteArray());
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * Every entry of the map as a long (METRICS, whose keys are the metric names): a value that
     * is not an integer in the int64 range is malformed. In the map's order.
     */
    Map<String, Long> allLongs() throws ProtocolException {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Map.Entry<String, Value> e : entries.entrySet()) {
            Value v = e.getValue();
            if (v.getValueType() != ValueType.INTEGER) {
                throw malformed(frame, "metric " + e.getKey() + " is a " + v.getValueType() + ", want INTEGER");
            }
            if (!v.asIntegerValue().isInLongRange()) {
                throw malformed(frame, "metric " + e.getKey() + " is out of the int64 range");
            }
            out.put(e.getKey(), v.asIntegerValue().toLong());
        }
        return Collections.unmodifiableMap(out);
    }

    Map<String, String> getStringMap(String key) throws ProtocolException {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<Value, Value> e : require(key, ValueType.MAP).asMapValue().entrySet()) {
            if (!e.getKey().isStringValue() || !e.getValue().isStringValue()) {
                throw malformed(frame, "key " + key + " must map strings to strings");
            }
            out.put(e.getKey().asStringValue().asString(), e.getValue().asStringValue().asString());
        }
        return Collections.unmodifiableMap(out);
    }

    // ---- encoding --------------------------------------------------------------------------

    /**
     * Writes a map in canonical form: keys in the order given by the caller (protocol.md's
     * order), integers, strings and binaries in their shortest msgpack encoding (msgpack-core
     * picks the shortest form by itself).
     */
    static final class Writer {
        private final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();

        Writer(int entries) {
            run(() -> p.packMapHeader(entries));
        }

        private interface IoAction {
            void run() throws IOException;
        }

        // A buffer packer only fails on out-of-memory; keep the signatures free of IOException.
        private static void run(IoAction a) {
            try {
                a.run();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        Writer key(String k) {
            run(() -> p.packString(k));
            return this;
        }

        Writer putLong(String k, long v) {
            key(k);
            run(() -> p.packLong(v));
            return this;
        }

        Writer putString(String k, String v) {
            key(k);
            run(() -> p.packString(v));
            return this;
        }

        Writer putBinary(String k, byte[] v) {
            key(k);
            binary(v);
            return this;
        }

        Writer putBool(String k, boolean v) {
            key(k);
            run(() -> p.packBoolean(v));
            return this;
        }

        Writer arrayHeader(int n) {
            run(() -> p.packArrayHeader(n));
            return this;
        }

        Writer mapHeader(int n) {
            run(() -> p.packMapHeader(n));
            return this;
        }

        Writer string(String v) {
            run(() -> p.packString(v));
            return this;
        }

        Writer longValue(long v) {
            run(() -> p.packLong(v));
            return this;
        }

        Writer binary(byte[] v) {
            run(() -> {
                p.packBinaryHeader(v.length);
                p.writePayload(v);
            });
            return this;
        }

        byte[] toByteArray() {
            return p.toByteArray();
        }
    }
}
