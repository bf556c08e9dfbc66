package io.flinkgo.shim.arrow;

import java.io.IOException;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * A key's bytes for the {@code _key} column: what the key's {@link TypeSerializer} writes, one key
 * at a time into a buffer this object reuses.
 *
 * <p>Design note: for {@code String} keys (Flink's {@link StringSerializer}, the common case) the
 * serializer writes the length plus one as a 7-bit varint and then every char through {@code
 * DataOutput.write}, one call per char; on 200-byte rows that was 5.5 % of the task thread. An
 * all-ASCII key is written here as the same varint followed by the string's own bytes (each ASCII
 * char is one byte of the same value in that format), which is byte for byte what the serializer
 * writes: the Go side, the snapshot's key bytes and restored state see no difference. Any other
 * key, or any key when the ASCII fast path is off, goes through the serializer.
 */
public final class KeyBytes {
    private final TypeSerializer<Object> serializer;
    private final boolean stringKeys;
    private final DataOutputSerializer out = new DataOutputSerializer(64);

    /** @param serializer the key serializer (not shared with other threads) */
    public KeyBytes(TypeSerializer<Object> serializer) {
        this.serializer = serializer;
        this.stringKeys = serializer.getClass() == StringSerializer.class;
    }

    /** Serialises {@code key}; its bytes are {@code buffer()[0, length())} until the next call. */
    public void serialize(Object key) throws IOException {
        out.clear();
        if (stringKeys && key instanceof String s) {
            byte[] b = AsciiStrings.bytes(s);
            if (b != null) {
                int n = b.length + 1; // StringValue's length is offset by one; 0 means null
                while (n >= 0x80) {
                    out.writeByte(n | 0x80);
                    n >>>= 7;
                }
                out.writeByte(n);
                out.write(b, 0, b.length);
                return;
            }
        }
        serializer.serialize(key, out);
    }

    /** The buffer the last key was written to (shared, reused by the next call). */
    public byte[] buffer() {
        return out.getSharedBuffer();
    }

    /** The last key's length in bytes. */
    public int length() {
        return out.length();
    }
}
