package io.flinkgo.shim.runtime;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.CRC32C;

/**
 * The layout of one key group in Flink raw keyed state (written after
 * {@code startNewKeyGroup(kg)}):
 *
 * <pre>
 * u8  layout version (1)
 * u32 BE section length n (0 = the key group has no state)
 * n   section bytes (opaque to Java: Go's snapshot section format)
 * u32 BE CRC32C of the section bytes (present also when n = 0: the CRC of nothing, 0)
 * </pre>
 *
 * <p>Every key group of the subtask's range is written, also the empty ones, so that a restore
 * (also after rescaling) sees a well-formed entry for each group it reads. Any corruption is an
 * {@link IOException} naming the key group.
 */
public final class RawSections {
    public static final int LAYOUT_VERSION = 1;

    /** Sections larger than this are rejected on read before allocating (corrupt length). */
    public static final int MAX_SECTION_BYTES = Integer.MAX_VALUE - 16;

    private RawSections() {}

    /** Writes one key group's entry; {@code section} may be null or empty (no state). */
    public static void write(OutputStream out, byte[] section) throws IOException {
        byte[] s = section == null ? new byte[0] : section;
        CRC32C crc = new CRC32C();
        crc.update(s, 0, s.length);
        out.write(LAYOUT_VERSION);
        writeInt(out, s.length);
        out.write(s);
        writeInt(out, (int) crc.getValue());
    }

    /**
     * Reads one key group's entry.
     *
     * @return the section, or {@code null} if the key group has no state
     * @throws IOException naming the key group if the entry is truncated or corrupt
     */
    public static byte[] read(InputStream in, int keyGroup) throws IOException {
        DataInputStream d = new DataInputStream(in);
        try {
            int version = d.readUnsignedByte();
            if (version != LAYOUT_VERSION) {
                throw corrupt(keyGroup, "unknown layout version " + version + " (this shim reads version " + LAYOUT_VERSION + ")");
            }
            long n = d.readInt() & 0xFFFF_FFFFL;
            if (n > MAX_SECTION_BYTES) {
                throw corrupt(keyGroup, "section length " + n + " is impossible");
            }
            byte[] s = d.readNBytes((int) n);
            if (s.length != n) {
                throw corrupt(keyGroup, "truncated: " + s.length + " of " + n + " section bytes");
            }
            int stored = d.readInt();
            CRC32C crc = new CRC32C();
            crc.update(s, 0, s.length);
            if ((int) crc.getValue() != stored) {
                throw corrupt(keyGroup, String.format("CRC32C mismatch (stored %08x, computed %08x)", stored, (int) crc.getValue()));
            }
            return n == 0 ? null : s;
        } catch (EOFException e) {
            throw corrupt(keyGroup, "truncated entry");
        }
    }

    private static IOException corrupt(int keyGroup, String what) {
        return new IOException("flinkgo raw keyed state of key group " + keyGroup + " is corrupt: " + what);
    }

    private static void writeInt(OutputStream out, int v) throws IOException {
        out.write(v >>> 24);
        out.write(v >>> 16);
        out.write(v >>> 8);
        out.write(v);
    }
}
