package io.flinkgo.shim.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

class AsciiStringsTest {
    @Test
    void anAsciiStringLendsItsOwnBytes() {
        // The test JVM opens java.lang (the pom's jvm.opens, as Flink's launch scripts do), so the
        // fast path is on here: the bytes are the string's own array, not a copy.
        String s = "customer-" + 42 + "-" + "x".repeat(170);
        byte[] b = AsciiStrings.bytes(s);
        assertNotNull(b, "fast path off: is java.lang opened to the tests?");
        assertSame(b, AsciiStrings.bytes(s));
        assertArrayEquals(s.getBytes(StandardCharsets.UTF_8), b);
        assertArrayEquals(new byte[0], AsciiStrings.bytes(""));
    }

    @Test
    void anyCharacterBeyondAsciiAnywhereMeansNoFastPath() {
        // Latin-1 strings (one byte per char, é is 0xE9) and UTF-16 ones (Ł is U+0141, whose low
        // byte 0x41 is 'A'), the odd char at every place around the 8- and 32-byte steps.
        for (int n = 1; n <= 80; n++) {
            for (int at = 0; at < n; at++) {
                for (char c : new char[] {'é', '\u0080', 'Ł', '\uD83D'}) {
                    char[] cs = "a".repeat(n).toCharArray();
                    cs[at] = c;
                    assertNull(AsciiStrings.bytes(new String(cs)), "length " + n + ", " + (int) c + " at " + at);
                }
            }
        }
    }

    @Test
    void stringsOfEveryKindAreWrittenAsUtf8() throws Exception {
        List<String> strings = new ArrayList<>();
        for (String odd : new String[] {"", "é", "\u0080", "\u00ff", "Ł", "€", "😀"}) {
            for (int n = 0; n <= 17; n++) {
                strings.add("a".repeat(n) + odd);
                strings.add(odd + "b".repeat(n));
                strings.add("c".repeat(n) + odd + "d".repeat(17 - n));
            }
        }
        List<TypeMapping.InputField> top = TypeMapping.inputFields(Types.ROW_NAMED(new String[] {"s"}, Types.STRING));
        List<TypeMapping.InputField> nested = TypeMapping.inputFields(Types.ROW_NAMED(new String[] {"r"},
                Types.ROW_NAMED(new String[] {"s"}, Types.STRING)));
        try (BufferAllocator root = new RootAllocator(64L << 20);
                BatchWriter w = new BatchWriter(root, 16L << 20, top);
                BatchWriter wn = new BatchWriter(root, 16L << 20, nested)) {
            byte[] key = {1};
            for (int i = 0; i < strings.size(); i++) {
                w.append(0, key, false, 0, Row.of(strings.get(i)));
                wn.append(0, key, false, 0, Row.of(Row.of(strings.get(i))));
            }
            for (BatchWriter bw : new BatchWriter[] {w, wn}) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                assertEquals(strings.size(), bw.finish(out));
                try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(out.toByteArray()), root)) {
                    VectorSchemaRoot v = r.getVectorSchemaRoot();
                    assertTrue(r.loadNextBatch());
                    VarCharVector sv = bw == w ? (VarCharVector) v.getVector(3)
                            : (VarCharVector) v.getVector(3).getChildrenFromFields().get(0);
                    for (int i = 0; i < strings.size(); i++) {
                        assertArrayEquals(strings.get(i).getBytes(StandardCharsets.UTF_8), sv.get(i),
                                (bw == w ? "top-level" : "nested") + " string " + i + ": " + strings.get(i));
                    }
                }
            }
        }
    }
}
