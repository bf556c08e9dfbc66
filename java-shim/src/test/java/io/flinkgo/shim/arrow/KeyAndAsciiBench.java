package io.flinkgo.shim.arrow;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Nanoseconds per call of two steps of the operator's task thread on BridgeBench's rows: a key's
 * bytes ({@code StringSerializer} against {@link KeyBytes}) and the ASCII check of a 170-char
 * payload ({@link AsciiStrings#bytes} against the one-accumulator loop it replaced). Run with
 * {@code mvn -Pbench exec:exec -Dbench.main=io.flinkgo.shim.arrow.KeyAndAsciiBench
 * -Dflinkgo.testagent=unused}; the last of 8 rounds is the figure (the first ones include JIT).
 */
public final class KeyAndAsciiBench {
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private static final VarHandle VALUE;
    private static final VarHandle CODER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(String.class, MethodHandles.lookup());
            VALUE = l.findVarHandle(String.class, "value", byte[].class);
            CODER = l.findVarHandle(String.class, "coder", byte.class);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("open java.lang (--add-opens=java.base/java.lang=ALL-UNNAMED)", e);
        }
    }

    private KeyAndAsciiBench() {}

    /** {@link AsciiStrings#bytes} before the twentieth session: one OR chain over 8-byte loads. */
    static byte[] oneAccumulator(String s) {
        if ((byte) CODER.get(s) != 0) {
            return null;
        }
        byte[] b = (byte[]) VALUE.get(s);
        long acc = 0;
        int i = 0;
        for (; i + 8 <= b.length; i += 8) {
            acc |= (long) I64.get(b, i);
        }
        for (; i < b.length; i++) {
            acc |= b[i];
        }
        return (acc & 0x8080808080808080L) == 0 ? b : null;
    }

    public static void main(String[] args) throws Exception {
        String[] keys = new String[10_000];
        for (int i = 0; i < keys.length; i++) {
            // Fresh Latin-1 strings, as RowSerializer.deserialize makes them.
            keys[i] = new String(String.format(Locale.ROOT, "customer-%05d", i).getBytes(StandardCharsets.ISO_8859_1),
                    StandardCharsets.ISO_8859_1);
        }
        String[] payloads = new String[1024];
        Random rnd = new Random(1);
        for (int i = 0; i < payloads.length; i++) {
            char[] c = new char[170];
            for (int j = 0; j < c.length; j++) {
                c[j] = (char) ('a' + rnd.nextInt(26));
            }
            payloads[i] = new String(c);
        }
        if (AsciiStrings.bytes(payloads[0]) == null) {
            throw new IllegalStateException("the ASCII fast path is off: open java.lang (--add-opens=java.base/java.lang=ALL-UNNAMED)");
        }
        @SuppressWarnings("unchecked")
        TypeSerializer<Object> ser = (TypeSerializer<Object>) (TypeSerializer<?>) StringSerializer.INSTANCE;
        KeyBytes kb = new KeyBytes(ser);
        DataOutputSerializer out = new DataOutputSerializer(64);
        long sink = 0;
        for (int round = 0; round < 8; round++) {
            long t0 = System.nanoTime();
            for (int r = 0; r < 400; r++) {
                for (String k : keys) {
                    out.clear();
                    ser.serialize(k, out);
                    sink += out.length();
                }
            }
            long t1 = System.nanoTime();
            for (int r = 0; r < 400; r++) {
                for (String k : keys) {
                    kb.serialize(k);
                    sink += kb.length();
                }
            }
            long t2 = System.nanoTime();
            for (int r = 0; r < 4000; r++) {
                for (String p : payloads) {
                    sink += oneAccumulator(p).length;
                }
            }
            long t3 = System.nanoTime();
            for (int r = 0; r < 4000; r++) {
                for (String p : payloads) {
                    sink += AsciiStrings.bytes(p).length;
                }
            }
            long t4 = System.nanoTime();
            double keyCalls = 400.0 * keys.length;
            double payloadCalls = 4000.0 * payloads.length;
            System.out.printf(Locale.ROOT,
                    "round %d: key bytes: StringSerializer %.1f ns, KeyBytes %.1f ns; ASCII check of 170 chars: one accumulator %.1f ns, four %.1f ns%n",
                    round, (t1 - t0) / keyCalls, (t2 - t1) / keyCalls, (t3 - t2) / payloadCalls, (t4 - t3) / payloadCalls);
        }
        System.out.println("(checksum " + sink + ")");
    }
}
