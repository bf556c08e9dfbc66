package io.flinkgo.shim.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

import org.junit.jupiter.api.Test;

class RawSectionsTest {
    private static byte[] entry(byte[] section) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RawSections.write(out, section);
        return out.toByteArray();
    }

    @Test
    void roundTrip() throws Exception {
        byte[] s = {1, 2, 3, 4, 5};
        assertArrayEquals(s, RawSections.read(new ByteArrayInputStream(entry(s)), 3));
        assertNull(RawSections.read(new ByteArrayInputStream(entry(null)), 3));
        assertNull(RawSections.read(new ByteArrayInputStream(entry(new byte[0])), 3));
    }

    @Test
    void consecutiveEntriesReadInOrder() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RawSections.write(out, new byte[] {1});
        RawSections.write(out, null);
        RawSections.write(out, new byte[] {2, 2});
        ByteArrayInputStream in = new ByteArrayInputStream(out.toByteArray());
        assertArrayEquals(new byte[] {1}, RawSections.read(in, 0));
        assertNull(RawSections.read(in, 1));
        assertArrayEquals(new byte[] {2, 2}, RawSections.read(in, 2));
    }

    @Test
    void corruptionNamesTheKeyGroup() throws Exception {
        byte[] e = entry(new byte[] {1, 2, 3});
        e[6] ^= 1; // flip a section bit
        IOException x = assertThrows(IOException.class, () -> RawSections.read(new ByteArrayInputStream(e), 42));
        assertTrue(x.getMessage().contains("key group 42") && x.getMessage().contains("CRC32C"), x.getMessage());

        byte[] t = entry(new byte[] {1, 2, 3});
        byte[] truncated = java.util.Arrays.copyOf(t, t.length - 2);
        x = assertThrows(IOException.class, () -> RawSections.read(new ByteArrayInputStream(truncated), 7));
        assertTrue(x.getMessage().contains("key group 7"), x.getMessage());

        byte[] v = entry(new byte[] {1});
        v[0] = 9;
        x = assertThrows(IOException.class, () -> RawSections.read(new ByteArrayInputStream(v), 8));
        assertTrue(x.getMessage().contains("key group 8") && x.getMessage().contains("version 9"), x.getMessage());
    }
}
