package io.flinkgo.shim.arrow;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The bytes of an ASCII string without copying them: a Latin-1 string's own array, when the
 * JVM opens {@code java.lang} to this code (Flink's launch scripts do). Else, or for any string
 * that is not all ASCII, {@link #bytes} returns null and the caller encodes as usual.
 */
final class AsciiStrings {
    private AsciiStrings() {}

    private static final VarHandle VALUE;
    private static final VarHandle CODER;
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    static {
        VarHandle value = null;
        VarHandle coder = null;
        if (!Boolean.getBoolean("flinkgo.shim.noAsciiFastPath")) {
            try {
                MethodHandles.Lookup l = MethodHandles.privateLookupIn(String.class, MethodHandles.lookup());
                value = l.findVarHandle(String.class, "value", byte[].class);
                coder = l.findVarHandle(String.class, "coder", byte.class);
            } catch (ReflectiveOperationException | RuntimeException e) {
                value = null;
                coder = null;
            }
        }
        VALUE = value;
        CODER = coder;
    }

    /** The string's own bytes, which the caller must not change, if it is all ASCII; else null. */
    static byte[] bytes(String s) {
        if (VALUE == null || (byte) CODER.get(s) != 0) {
            return null;
        }
        byte[] b = (byte[]) VALUE.get(s);
        // Four independent accumulators, so the loads do not wait on one chain of ORs: 8.5 ns
        // for 170 chars where one took 12.6 (benchmarks/bridge/HISTORY.md, twentieth session).
        long a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        int i = 0;
        for (; i + 32 <= b.length; i += 32) {
            a0 |= (long) I64.get(b, i);
            a1 |= (long) I64.get(b, i + 8);
            a2 |= (long) I64.get(b, i + 16);
            a3 |= (long) I64.get(b, i + 24);
        }
        for (; i + 8 <= b.length; i += 8) {
            a0 |= (long) I64.get(b, i);
        }
        for (; i < b.length; i++) {
            a1 |= b[i];
        }
        return ((a0 | a1 | a2 | a3) & 0x8080808080808080L) == 0 ? b : null;
    }
}
