package io.flinkgo.shim.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class KeyBytesTest {
    @SuppressWarnings("unchecked")
    private static TypeSerializer<Object> erased(TypeSerializer<?> s) {
        return (TypeSerializer<Object>) s;
    }

    private static byte[] bySerializer(TypeSerializer<Object> s, Object key) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(16);
        s.serialize(key, out);
        return out.getCopyOfBuffer();
    }

    private static byte[] byKeyBytes(KeyBytes kb, Object key) throws Exception {
        kb.serialize(key);
        return Arrays.copyOf(kb.buffer(), kb.length());
    }

    @Test
    void stringKeysAreTheBytesStringSerializerWritesAtEveryVarintLengthBoundary() throws Exception {
        TypeSerializer<Object> s = erased(StringSerializer.INSTANCE);
        KeyBytes kb = new KeyBytes(s);
        List<String> keys = new ArrayList<>(List.of("", "a", "customer-00042", "\u007f~ \t\n"));
        // The length written is chars + 1, so the varint grows at 127, 16383 and 2097151 chars.
        for (int n : new int[] {126, 127, 128, 255, 256, 16382, 16383, 16384, 2_097_150, 2_097_151, 2_097_152}) {
            keys.add("k".repeat(n));
        }
        for (String key : keys) {
            assertNotNull(AsciiStrings.bytes(key), "the fast path must be on for this test (java.lang opened?)");
            byte[] got = byKeyBytes(kb, key);
            assertArrayEquals(bySerializer(s, key), got, "key of " + key.length() + " chars");
            assertEquals(key, StringSerializer.INSTANCE.deserialize(new DataInputDeserializer(got)));
        }
    }

    @Test
    void nonAsciiStringKeysGoThroughTheSerializer() throws Exception {
        TypeSerializer<Object> s = erased(StringSerializer.INSTANCE);
        KeyBytes kb = new KeyBytes(s);
        for (String key : new String[] {"é", "caf\u00e9", "\u0080", "Łódź", "日本語", "emoji \uD83D\uDE00", "x".repeat(200) + "é"}) {
            assertArrayEquals(bySerializer(s, key), byKeyBytes(kb, key), key);
        }
        // A short ASCII key after a long one: the buffer is reused, only length() bytes count.
        byte[] longKey = byKeyBytes(kb, "y".repeat(1000));
        assertEquals(1002, longKey.length);
        assertArrayEquals(bySerializer(s, "z"), byKeyBytes(kb, "z"));
        assertEquals(2, kb.length());
    }

    @Test
    void otherKeyTypesUseTheirSerializer() throws Exception {
        TypeSerializer<Object> s = erased(LongSerializer.INSTANCE);
        KeyBytes kb = new KeyBytes(s);
        for (long key : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 42}) {
            assertArrayEquals(bySerializer(s, key), byKeyBytes(kb, key));
            assertEquals(8, kb.length());
        }
    }
}
