package io.flinkgo.shim.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.flinkgo.shim.wire.ProtocolException;

class ArrowRoundTripTest {
    private BufferAllocator root;

    @BeforeEach
    void setUp() {
        root = new RootAllocator(64L << 20);
    }

    @AfterEach
    void tearDown() {
        root.close(); // fails the test if any buffer leaked
    }

    static Row sample(int i) {
        return Row.of(i % 2 == 0, (byte) i, (short) (i * 100), i * 1000, (long) i << 40, 1.5f * i, 2.25 * i, "s" + i + "é",
                new byte[] {(byte) i, 7}, new BigDecimal("12.5").add(BigDecimal.valueOf(i)),
                LocalDateTime.of(2024, 1, 2, 3, 4, 5, 123_456_000), Instant.ofEpochSecond(1_700_000_000L + i, 999_000),
                LocalDate.of(1969, 12, 31).plusDays(i), new String[] {"a", null, "c" + i}, List.of(1L, 2L, (long) i),
                new Row[] {Row.of(i), null}, Row.of("n" + i, new String[] {"t"}));
    }

    static Row nulls() {
        return new Row(17);
    }

    @Test
    void inputBatchRoundTripsEveryType() throws Exception {
        RowTypeInfo type = TypeMappingTest.allTypes();
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(type);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            rows.add(sample(i));
        }
        rows.add(nulls());
        try (BatchWriter w = new BatchWriter(root, 16L << 20, fields)) {
            for (int round = 0; round < 3; round++) { // vectors are reused between batches
                for (int i = 0; i < rows.size(); i++) {
                    w.append(i * 3, new byte[] {(byte) i}, i != 2, 1000L + i, rows.get(i));
                }
                assertEquals(rows.size(), w.rows());
                assertTrue(w.bytes() > 0);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                assertEquals(rows.size(), w.finish(out));
                assertEquals(0, w.rows());
                check(out.toByteArray(), fields, rows);
            }
        }
    }

    @Test
    void aReusedBatchCarriesNothingOfThePreviousOne() throws Exception {
        // reset() zeroes only the validity bitmaps of the top-level vectors (BatchWriter
        // .clearForReuse): a batch of nulls where the one before had values, and a shorter batch
        // after a longer one, must decode exactly.
        RowTypeInfo type = TypeMappingTest.allTypes();
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(type);
        List<List<Row>> batches = List.of(
                List.of(sample(0), sample(1), sample(2), sample(3)),
                List.of(nulls(), nulls(), sample(4), nulls()),
                List.of(sample(1)),
                List.of(nulls(), sample(2), nulls(), nulls(), sample(0)));
        try (BatchWriter w = new BatchWriter(root, 16L << 20, fields)) {
            for (List<Row> rows : batches) {
                for (int i = 0; i < rows.size(); i++) {
                    w.append(i * 3, new byte[] {(byte) i}, i != 2, 1000L + i, rows.get(i));
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                assertEquals(rows.size(), w.finish(out));
                check(out.toByteArray(), fields, rows);
            }
        }
    }

    /** Input fields (s STRING, b BYTES, n BIGINT). */
    private static List<TypeMapping.InputField> stringBytesLong() {
        return TypeMapping.inputFields(org.apache.flink.api.common.typeinfo.Types.ROW_NAMED(new String[] {"s", "b", "n"},
                org.apache.flink.api.common.typeinfo.Types.STRING,
                org.apache.flink.api.common.typeinfo.Types.PRIMITIVE_ARRAY(org.apache.flink.api.common.typeinfo.Types.BYTE),
                org.apache.flink.api.common.typeinfo.Types.LONG));
    }

    @Test
    void stringsBytesAndKeysSurviveGrowthNullsAndDroppedBatches() throws Exception {
        // Top-level STRING and BYTES columns and the key column are appended without setSafe
        // (VarWidthAppender); batches of very different sizes, values far longer than the first
        // buffers, nulls anywhere, and a batch dropped half way must all come out exact.
        List<TypeMapping.InputField> fields = stringBytesLong();
        java.util.Random rnd = new java.util.Random(3);
        try (BatchWriter w = new BatchWriter(root, 48L << 20, fields)) {
            for (int n : new int[] {1, 5000, 3, 0, 700}) {
                if (n == 0) { // a batch dropped after some rows (a failure), then a new one
                    w.append(0, new byte[] {1}, true, 0, Row.of("x".repeat(50_000), new byte[] {1}, 1L));
                    w.reset();
                    continue;
                }
                List<Row> rows = new ArrayList<>();
                List<byte[]> keys = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int len = rnd.nextInt(10) == 0 ? 20_000 + rnd.nextInt(20_000) : rnd.nextInt(40);
                    String str = rnd.nextInt(7) == 0 ? null : "é".repeat(len / 2) + i;
                    byte[] bytes = rnd.nextInt(5) == 0 ? null : new byte[rnd.nextInt(3) == 0 ? 0 : len];
                    if (bytes != null && bytes.length > 0) {
                        bytes[bytes.length - 1] = (byte) i;
                    }
                    byte[] key = ("k" + i).repeat(1 + rnd.nextInt(3)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    rows.add(Row.of(str, bytes, (long) i));
                    keys.add(key);
                    w.append(i % 128, key, true, i, rows.get(i));
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                assertEquals(n, w.finish(out));
                try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(out.toByteArray()), root)) {
                    VectorSchemaRoot v = r.getVectorSchemaRoot();
                    assertTrue(r.loadNextBatch());
                    assertEquals(n, v.getRowCount());
                    VarBinaryVector k = (VarBinaryVector) v.getVector(1);
                    org.apache.arrow.vector.VarCharVector sv = (org.apache.arrow.vector.VarCharVector) v.getVector(3);
                    VarBinaryVector bv = (VarBinaryVector) v.getVector(4);
                    for (int i = 0; i < n; i++) {
                        assertArrayEquals(keys.get(i), k.get(i), "batch of " + n + ", key " + i);
                        Object str = rows.get(i).getField(0);
                        assertEquals(str, sv.isNull(i) ? null : new String(sv.get(i), java.nio.charset.StandardCharsets.UTF_8),
                                "batch of " + n + ", string " + i);
                        assertArrayEquals((byte[]) rows.get(i).getField(1), bv.isNull(i) ? null : bv.get(i),
                                "batch of " + n + ", bytes " + i);
                    }
                }
            }
        }
    }

    @Test
    void aRowThatFailsHalfWayIsReplacedByTheNextAppend() throws Exception {
        List<TypeMapping.InputField> fields = stringBytesLong();
        try (BatchWriter w = new BatchWriter(root, 16L << 20, fields)) {
            w.append(0, "k0".getBytes(java.nio.charset.StandardCharsets.UTF_8), true, 0, Row.of("first", new byte[] {1}, 1L));
            // Column b holds a String: the key and column s are written, then the row fails.
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> w.append(1,
                    "a-long-key-that-fails".getBytes(java.nio.charset.StandardCharsets.UTF_8), true, 1,
                    Row.of("a string that is written before the failure", "not bytes", 2L)));
            assertTrue(e.getMessage().contains("'b'"), e.getMessage());
            assertEquals(1, w.rows());
            w.append(1, "k1".getBytes(java.nio.charset.StandardCharsets.UTF_8), true, 2, Row.of(null, new byte[] {7, 8}, 3L));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertEquals(2, w.finish(out));
            try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(out.toByteArray()), root)) {
                VectorSchemaRoot v = r.getVectorSchemaRoot();
                assertTrue(r.loadNextBatch());
                VarBinaryVector k = (VarBinaryVector) v.getVector(1);
                org.apache.arrow.vector.VarCharVector sv = (org.apache.arrow.vector.VarCharVector) v.getVector(3);
                VarBinaryVector bv = (VarBinaryVector) v.getVector(4);
                assertEquals("k0", new String(k.get(0), java.nio.charset.StandardCharsets.UTF_8));
                assertEquals("k1", new String(k.get(1), java.nio.charset.StandardCharsets.UTF_8));
                assertEquals("first", new String(sv.get(0), java.nio.charset.StandardCharsets.UTF_8));
                assertTrue(sv.isNull(1), "the failed row's string must not show through the null");
                assertArrayEquals(new byte[] {7, 8}, bv.get(1));
                assertEquals(3L, ((BigIntVector) v.getVector(5)).get(1));
            }
        }
    }

    private void check(byte[] ipc, List<TypeMapping.InputField> fields, List<Row> rows) throws Exception {
        try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(ipc), root)) {
            VectorSchemaRoot v = r.getVectorSchemaRoot();
            assertEquals(BatchWriter.inputSchema(fields), v.getSchema());
            assertTrue(r.loadNextBatch());
            assertEquals(rows.size(), v.getRowCount());
            ColumnType rowType = TypeMapping.rowType(fields);
            for (int i = 0; i < rows.size(); i++) {
                assertEquals(i * 3, ((IntVector) v.getVector(0)).get(i));
                assertArrayEquals(new byte[] {(byte) i}, ((VarBinaryVector) v.getVector(1)).get(i));
                BigIntVector ts = (BigIntVector) v.getVector(2);
                if (i == 2) {
                    assertTrue(ts.isNull(i));
                } else {
                    assertEquals(1000L + i, ts.get(i));
                }
                Row want = rows.get(i);
                for (int c = 0; c < fields.size(); c++) {
                    Object got = ValueReader.create(rowType.fieldTypes().get(c), (FieldVector) v.getVector(c + 3)).read(i);
                    Object exp = want.getField(c);
                    if (exp instanceof BigDecimal) {
                        exp = ((BigDecimal) exp).setScale(18);
                    }
                    if (exp instanceof List) {
                        exp = ((List<?>) exp).toArray(new Long[0]);
                    }
                    assertEquals(Row.of(exp).toString(), Row.of(got).toString(), "row " + i + " column " + fields.get(c).name);
                }
            }
            assertTrue(!r.loadNextBatch());
        }
    }

    @Test
    void decimalsAreNeverRounded() {
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(
                org.apache.flink.api.common.typeinfo.Types.ROW_NAMED(new String[] {"d"}, org.apache.flink.api.common.typeinfo.Types.BIG_DEC));
        try (BatchWriter w = new BatchWriter(root, 1 << 20, fields)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> w.append(0, new byte[0], false, 0, Row.of(new BigDecimal("1e-19"))));
            assertTrue(e.getMessage().contains("'d'") && e.getMessage().contains("rounded"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> w.append(0, new byte[0], false, 0, Row.of(new BigDecimal("1e21"))));
            assertTrue(e.getMessage().contains("38 digits"), e.getMessage());
            w.reset();
        }
    }

    @Test
    void aValueOfTheWrongClassNamesTheField() {
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(TypeMappingTest.allTypes());
        Row bad = sample(1);
        bad.setField(3, 5L); // i32 holds a Long
        try (BatchWriter w = new BatchWriter(root, 1 << 20, fields)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> w.append(0, new byte[0], false, 0, bad));
            assertTrue(e.getMessage().contains("'i32'") && e.getMessage().contains("java.lang.Long"), e.getMessage());
            w.reset();
        }
    }

    @Test
    void pojoInput() throws Exception {
        TypeMappingTest.Order o = new TypeMappingTest.Order();
        o.customer = "c1";
        o.amount = 9.5;
        TypeMappingTest.Item it = new TypeMappingTest.Item();
        it.sku = "x";
        it.qty = 2;
        o.items = new TypeMappingTest.Item[] {it};
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(TypeInformation.of(TypeMappingTest.Order.class));
        try (BatchWriter w = new BatchWriter(root, 1 << 20, fields)) {
            w.append(0, new byte[] {0}, true, 1000, o);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            w.finish(out);
            check(out.toByteArray(), fields, List.of(Row.of(9.5, null, "c1", new Row[] {Row.of(2, "x")})));
        }
    }

    /** Encodes rows of an output row type as an OUTPUT payload, as Go would. */
    static byte[] outputStream(BufferAllocator alloc, ColumnType rowType, List<Long> ts, List<Row> rows) throws Exception {
        List<TypeMapping.InputField> fields = TypeMapping.rowFields(rowType);
        try (VectorSchemaRoot r = VectorSchemaRoot.create(OutputReader.outputSchema(rowType), alloc)) {
            for (int i = 0; i < rows.size(); i++) {
                BigIntVector t = (BigIntVector) r.getVector(0);
                if (ts.get(i) == null) {
                    t.setNull(i);
                } else {
                    t.setSafe(i, ts.get(i));
                }
                for (int c = 0; c < fields.size(); c++) {
                    ValueWriter.create(fields.get(c), r.getVector(c + 1)).write(i, rows.get(i).getField(c));
                }
            }
            r.setRowCount(rows.size());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (ArrowStreamWriter w = new ArrowStreamWriter(r, null, out)) {
                w.start();
                w.writeBatch();
                w.end();
            }
            return out.toByteArray();
        }
    }

    @Test
    void outputBatchToRows() throws Exception {
        ColumnType rowType = SqlTypeParser.parse(
                "ROW<customer STRING, score DOUBLE, amount DECIMAL(10, 2), tags ARRAY<STRING>, at TIMESTAMP(6), d ROW<n BIGINT>>");
        List<Row> rows = List.of(
                Row.of("a", 0.5, new BigDecimal("12.50"), new String[] {"x"}, LocalDateTime.of(2020, 1, 1, 0, 0, 0, 1000), Row.of(3L)),
                new Row(6));
        byte[] ipc = outputStream(root, rowType, java.util.Arrays.asList(77L, null), rows);
        List<Long> gotTs = new ArrayList<>();
        List<Row> got = new ArrayList<>();
        try (OutputReader r = new OutputReader(root, 1 << 20, rowType)) {
            assertEquals(2, r.read(ipc, (ts, row) -> {
                gotTs.add(ts);
                got.add(row);
            }));
        }
        assertEquals(77L, gotTs.get(0));
        assertNull(gotTs.get(1));
        assertEquals("a", got.get(0).getField("customer"));
        assertEquals(new BigDecimal("12.50"), got.get(0).getField("amount"));
        assertEquals(String[].class, got.get(0).getField("tags").getClass());
        assertEquals(3L, ((Row) got.get(0).getField("d")).getField("n"));
        assertEquals(rows.get(0).toString(), got.get(0).toString());
        assertNull(got.get(1).getField(0));
    }

    @Test
    void outputReadFromAReusedLongerArrayReadsOnlyItsLengthAndKeepsNothingOfIt() throws Exception {
        // As a pooled OUTPUT frame arrives: a long payload first, then a shorter one in the same
        // array, whose tail still holds the first one's bytes.
        ColumnType rowType = SqlTypeParser.parse("ROW<s STRING, b BYTES, tags ARRAY<STRING>>");
        List<Row> longRows = new ArrayList<>();
        List<Long> longTs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            longRows.add(Row.of("long-" + i, new byte[] {(byte) i}, new String[] {"L" + i}));
            longTs.add((long) i);
        }
        byte[] first = outputStream(root, rowType, longTs, longRows);
        byte[] second = outputStream(root, rowType, java.util.Arrays.asList(7L, null),
                List.of(Row.of("short", new byte[] {9, 8}, new String[] {"s"}), Row.of("two", null, null)));
        assertTrue(second.length < first.length, "the second payload must be the shorter one");
        byte[] array = first.clone();
        List<Row> got = new ArrayList<>();
        List<Long> gotTs = new ArrayList<>();
        try (OutputReader r = new OutputReader(root, 1 << 20, rowType)) {
            assertEquals(50, r.read(array, first.length, (t, row) -> { }));
            System.arraycopy(second, 0, array, 0, second.length);
            assertEquals(2, r.read(array, second.length, (t, row) -> {
                gotTs.add(t);
                got.add(row);
            }));
            // The whole array is not one stream: its tail is the first payload's.
            ProtocolException e = assertThrows(ProtocolException.class, () -> r.read(array, (t, row) -> { }));
            assertTrue(e.getMessage().contains("bytes after the end-of-stream marker"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> r.read(array, array.length + 1, (t, row) -> { }));
        }
        java.util.Arrays.fill(array, (byte) 0x5A); // the array is reused: rows must not see it
        assertEquals(java.util.Arrays.asList(7L, null), gotTs);
        assertEquals("short", got.get(0).getField("s"));
        assertArrayEquals(new byte[] {9, 8}, (byte[]) got.get(0).getField("b"));
        assertArrayEquals(new String[] {"s"}, (String[]) got.get(0).getField("tags"));
        assertEquals("two", got.get(1).getField("s"));
        assertNull(got.get(1).getField("b"));
    }

    @Test
    void outputStringsOfEveryLengthDecode() throws Exception {
        // Empty, ASCII, multi-byte UTF-8 and a supplementary character, longer than the
        // string reader's first scratch array and shorter again after it grew.
        ColumnType rowType = SqlTypeParser.parse("ROW<s STRING, tags ARRAY<STRING>>");
        String big = "é".repeat(200) + "x".repeat(70_000) + "\uD83D\uDE00";
        List<String> values = java.util.Arrays.asList("", "a", big, null, "日本語", "x".repeat(300), "z");
        List<Row> rows = new ArrayList<>();
        List<Long> ts = new ArrayList<>();
        for (String v : values) {
            rows.add(Row.of(v, new String[] {v, "t"}));
            ts.add(null);
        }
        byte[] ipc = outputStream(root, rowType, ts, rows);
        List<Row> got = new ArrayList<>();
        try (OutputReader r = new OutputReader(root, 1 << 20, rowType)) {
            assertEquals(values.size(), r.read(ipc, (t, row) -> got.add(row)));
        }
        for (int i = 0; i < values.size(); i++) {
            assertEquals(values.get(i), got.get(i).getField("s"), "row " + i);
            assertArrayEquals(new String[] {values.get(i), "t"}, (String[]) got.get(i).getField("tags"), "row " + i);
        }
    }

    @Test
    void aDamagedOutputPayloadIsAProtocolErrorAndTheReaderCarriesOn() throws Exception {
        ColumnType rowType = SqlTypeParser.parse("ROW<k STRING, n BIGINT>");
        List<Row> rows = List.of(Row.of("a", 1L), Row.of("bb", 2L), Row.of(null, 3L));
        byte[] ipc = outputStream(root, rowType, java.util.Arrays.asList(1L, 2L, null), rows);
        try (OutputReader r = new OutputReader(root, 1 << 20, rowType)) {
            java.util.function.Consumer<String> readsGood = what -> {
                List<Row> got = new ArrayList<>();
                try {
                    assertEquals(3, r.read(ipc, (t, row) -> got.add(row)), what);
                } catch (Exception e) {
                    throw new AssertionError(what + ": the intact payload failed afterwards: " + e, e);
                }
                assertEquals(rows.toString(), got.toString(), what);
            };
            readsGood.accept("first read");
            // Every truncation fails as malformed, never with another exception.
            for (int len = 0; len < ipc.length; len++) {
                byte[] cut = java.util.Arrays.copyOf(ipc, len);
                ProtocolException e = assertThrows(ProtocolException.class, () -> r.read(cut, (t, row) -> { }), "cut at " + len);
                assertEquals(io.flinkgo.shim.wire.ErrorCode.MALFORMED_FRAME, e.code(), "cut at " + len + ": " + e.getMessage());
                readsGood.accept("after the cut at " + len);
            }
            byte[] longer = java.util.Arrays.copyOf(ipc, ipc.length + 1);
            assertThrows(ProtocolException.class, () -> r.read(longer, (t, row) -> { }));
            // A flipped byte may still decode (a string's content), but it never escapes as
            // anything but a protocol error, and leaves nothing behind; where it decodes, it
            // decodes to what Arrow's vectors make of it.
            flipsDecodeAsVectorsDo(r, rowType, ipc, new java.util.Random(7), 2000, readsGood);
        } // close() fails if any Arrow buffer leaked
    }

    /** Reads an OUTPUT payload to "ts|row" strings, from the payload or from vectors only. */
    private List<String> readAll(ColumnType rowType, byte[] ipc, boolean heap) throws Exception {
        List<String> got = new ArrayList<>();
        try (OutputReader r = new OutputReader(root, 1 << 24, rowType, heap)) {
            r.read(ipc, (t, row) -> got.add(t + "|" + row));
            r.read(ipc, (t, row) -> got.add(t + "|" + row)); // the same again, on reused state
        }
        return got;
    }

    /**
     * Flips one random byte of {@code ipc}, {@code flips} times: a payload that {@code r} decodes
     * decodes to the same from vectors only; {@code after} runs after each flip.
     */
    private void flipsDecodeAsVectorsDo(OutputReader r, ColumnType rowType, byte[] ipc, java.util.Random rnd, int flips,
            java.util.function.Consumer<String> after) throws Exception {
        int decoded = 0;
        try (OutputReader vectors = new OutputReader(root, 1 << 24, rowType, false)) {
            for (int i = 0; i < flips; i++) {
                byte[] bad = ipc.clone();
                int at = rnd.nextInt(bad.length);
                bad[at] ^= (byte) (1 + rnd.nextInt(255));
                List<String> got = new ArrayList<>();
                boolean refused = false;
                try {
                    r.read(bad, (t, row) -> got.add(t + "|" + row));
                } catch (ProtocolException e) {
                    refused = true;
                }
                if (!refused) {
                    decoded++;
                    List<String> want = new ArrayList<>();
                    vectors.read(bad, (t, row) -> want.add(t + "|" + row));
                    assertEquals(want, got, "flip " + i + " at byte " + at + ": " + ipc[at] + " -> " + bad[at]);
                }
                after.accept("after flip " + i);
            }
        }
        assertTrue(decoded > 0, "no flipped payload decoded: the comparison checked nothing");
    }

    @Test
    void columnsReadFromThePayloadEqualThoseReadFromVectors() throws Exception {
        // Every type read from the payload, with and without a column that is read from vectors.
        String flat = "f BOOLEAN, t TINYINT, sm SMALLINT, i INT, b BIGINT, fl FLOAT, d DOUBLE, s STRING, "
                + "by BYTES, dec DECIMAL(10, 2), wide DECIMAL(38, 10), lt TIMESTAMP(6), it TIMESTAMP_LTZ(6), day DATE";
        java.util.Random rnd = new java.util.Random(11);
        for (String extra : new String[] {"", ", tags ARRAY<STRING>, p ROW<x BIGINT>"}) {
            ColumnType rowType = SqlTypeParser.parse("ROW<" + flat + extra + ">");
            int width = rowType.fieldNames().size();
            for (int n : new int[] {0, 1, 7, 8, 9, 300}) {
                List<Row> rows = new ArrayList<>();
                List<Long> ts = new ArrayList<>();
                for (int k = 0; k < n; k++) {
                    Object[] v = {rnd.nextBoolean(), (byte) rnd.nextInt(), (short) rnd.nextInt(), rnd.nextInt(),
                        rnd.nextLong(), rnd.nextFloat() - 0.5f, rnd.nextGaussian() * 1e10,
                        List.of("", "a", "héllo ✓", "ключ", "x".repeat(rnd.nextInt(500))).get(rnd.nextInt(5)),
                        new byte[rnd.nextInt(20)], BigDecimal.valueOf(rnd.nextInt(2_000_000) - 1_000_000, 2),
                        new BigDecimal(new java.math.BigInteger(120, rnd)).movePointLeft(10).multiply(BigDecimal.valueOf(rnd.nextBoolean() ? 1 : -1)),
                        LocalDateTime.of(1900 + rnd.nextInt(300), 1 + rnd.nextInt(12), 1 + rnd.nextInt(28), rnd.nextInt(24), 0, 0, rnd.nextInt(1_000_000) * 1000),
                        Instant.ofEpochSecond(rnd.nextInt() * 10L, rnd.nextInt(1_000_000) * 1000L),
                        LocalDate.ofEpochDay(rnd.nextInt(200_000) - 100_000)};
                    Object[] all = java.util.Arrays.copyOf(v, width);
                    if (width > v.length) {
                        all[v.length] = new String[] {"t" + k, null};
                        all[v.length + 1] = Row.of((long) k);
                    }
                    for (int c = 0; c < width; c++) {
                        if (rnd.nextInt(5) == 0) {
                            all[c] = null;
                        }
                    }
                    rows.add(Row.of(all));
                    ts.add(rnd.nextInt(4) == 0 ? null : rnd.nextLong());
                }
                byte[] ipc = outputStream(root, rowType, ts, rows);
                List<String> fromVectors = readAll(rowType, ipc, false);
                assertEquals(2 * n, fromVectors.size());
                for (int k = 0; k < n; k++) {
                    assertEquals(ts.get(k) + "|" + rows.get(k), fromVectors.get(k), "vectors, row " + k);
                }
                assertEquals(fromVectors, readAll(rowType, ipc, true), "columns " + rowType + ", " + n + " rows");
                if (n == 9) {
                    try (OutputReader heap = new OutputReader(root, 1 << 24, rowType, true)) {
                        flipsDecodeAsVectorsDo(heap, rowType, ipc, rnd, 1500, what -> { });
                    }
                }
            }
        }
    }

    @Test
    void outputWithAnotherSchemaIsBadSchema() throws Exception {
        ColumnType declared = SqlTypeParser.parse("ROW<customer STRING, score DOUBLE>");
        ColumnType sent = SqlTypeParser.parse("ROW<customer STRING, score FLOAT>");
        byte[] ipc = outputStream(root, sent, List.of(1L), List.of(Row.of("a", 1f)));
        try (OutputReader r = new OutputReader(root, 1 << 20, declared)) {
            ProtocolException e = assertThrows(ProtocolException.class, () -> r.read(ipc, (ts, row) -> { }));
            assertTrue(e.getMessage().contains("bad_schema") && e.getMessage().contains("score"), e.getMessage());
        }
    }

    @Test
    void schemaBytesRoundTrip() throws Exception {
        var fields = TypeMapping.inputFields(TypeMappingTest.allTypes());
        var s = BatchWriter.inputSchema(fields);
        assertEquals(s, SchemaIO.fromBytes(SchemaIO.toBytes(s)));
        assertNull(SchemaIO.difference(s, SchemaIO.fromBytes(SchemaIO.toBytes(s))));
    }
}
