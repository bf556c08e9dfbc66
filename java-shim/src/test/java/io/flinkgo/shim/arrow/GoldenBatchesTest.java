package io.flinkgo.shim.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.apache.flink.types.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The golden Arrow files of testdata/wire/ (written by Go's arrowio): the same columns and rows
 * as arrowio/golden_test.go. Java must read Go's batches to the same values, announce the same
 * schemas, and write input batches that decode to the same values.
 */
class GoldenBatchesTest {
    static final String[][] COLUMNS = {
        {"flag", "BOOLEAN"}, {"tiny", "TINYINT"}, {"small", "SMALLINT"}, {"num", "INT"}, {"big", "BIGINT"},
        {"ratio", "FLOAT"}, {"score", "DOUBLE"}, {"name", "STRING"}, {"payload", "BYTES"}, {"price", "DECIMAL(10, 2)"},
        {"wide", "DECIMAL(38, 10)"}, {"local_ts", "TIMESTAMP(6)"}, {"instant", "TIMESTAMP_LTZ(6)"}, {"day", "DATE"},
        {"tags", "ARRAY<STRING>"}, {"matrix", "ARRAY<ARRAY<BIGINT>>"}, {"point", "ROW<x DOUBLE, y DOUBLE, label STRING>"},
        {"meta", "ROW<id BIGINT, scores ARRAY<DOUBLE>, inner ROW<ok BOOLEAN>>"},
    };

    static final int[] KEY_GROUPS = {0, 17, 128, 32767};
    static final byte[][] KEYS = {"alice".getBytes(java.nio.charset.StandardCharsets.UTF_8), {}, {0, 0, 0, 0x2A},
        {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF}};
    static final Long[] TIMESTAMPS = {1_700_000_000_000L, null, 1L, -1L};

    private BufferAllocator alloc;

    @BeforeEach
    void setUp() {
        alloc = new RootAllocator(64L << 20);
    }

    @AfterEach
    void tearDown() {
        alloc.close();
    }

    static ColumnType rowType() {
        List<String> names = new ArrayList<>();
        List<ColumnType> types = new ArrayList<>();
        for (String[] c : COLUMNS) {
            names.add(c[0]);
            types.add(SqlTypeParser.parse(c[1]));
        }
        return ColumnType.row(names, types);
    }

    static List<Row> rows() {
        return List.of(
                Row.of(true, (byte) 127, (short) 32767, Integer.MAX_VALUE, Long.MAX_VALUE, 1.5f, 3.25, "héllo ✓",
                        new byte[] {0, 1, (byte) 0xFF}, new BigDecimal("12.50"),
                        new BigDecimal("123456789012345678901234567.0123456789"),
                        LocalDateTime.of(2024, 2, 29, 12, 34, 56, 789_012_000), Instant.parse("2024-01-01T00:00:00.000001Z"),
                        LocalDate.of(2024, 2, 29), new String[] {"a", "b"}, new Long[][] {{1L, 2L}, {3L}},
                        Row.of(1.0, -2.5, "p"), Row.of(7L, new Double[] {0.5, 1.5}, Row.of(true))),
                new Row(18),
                Row.of(false, (byte) -128, (short) -32768, Integer.MIN_VALUE, Long.MIN_VALUE, -0.25f, 1e300, "",
                        new byte[0], new BigDecimal("-0.05"), new BigDecimal("-9999999999999999999999999999.9999999999"),
                        LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000), Instant.EPOCH, LocalDate.of(1969, 12, 31),
                        new String[0], new Long[][] {{}, null, {null, 5L}}, Row.of(null, 0.0, null), Row.of(null, null, null)),
                Row.of(null, (byte) 0, null, 42, null, null, 0.1, "ключ", null, new BigDecimal("0.00"),
                        new BigDecimal("0.0000000001"), null, null, LocalDate.of(1970, 1, 1), new String[] {"x", null}, null,
                        null, Row.of(-1L, new Double[0], Row.of((Object) null))));
    }

    static byte[] file(String name) throws Exception {
        return Files.readAllBytes(Path.of(System.getProperty("flinkgo.testdata", "../testdata"), "wire", name));
    }

    @Test
    void schemasMatchGo() throws Exception {
        ColumnType row = rowType();
        assertNull(SchemaIO.difference(OutputReader.outputSchema(row), SchemaIO.fromBytes(file("output_schema.arrow"))));
        assertNull(SchemaIO.difference(BatchWriter.inputSchema(TypeMapping.rowFields(row)),
                SchemaIO.fromBytes(file("input_schema.arrow"))));
        // Nullability must agree too: Go compares schemas exactly.
        assertEquals(BatchWriter.inputSchema(TypeMapping.rowFields(row)).getFields().get(1).isNullable(),
                SchemaIO.fromBytes(file("input_schema.arrow")).getFields().get(1).isNullable());
    }

    @Test
    void outputBatchReadsToTheGoldenRows() throws Exception {
        List<Long> ts = new ArrayList<>();
        List<Row> got = new ArrayList<>();
        try (OutputReader r = new OutputReader(alloc, 16 << 20, rowType())) {
            r.read(file("output_batch.arrow"), (t, row) -> {
                ts.add(t);
                got.add(row);
            });
        }
        assertEquals(java.util.Arrays.asList(TIMESTAMPS), ts);
        List<Row> want = rows();
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i).toString(), got.get(i).toString(), "row " + i);
        }
    }

    /** Decodes an input batch with Java's readers. */
    private List<Row> readInput(byte[] ipc, boolean checkSystemColumns) throws Exception {
        ColumnType row = rowType();
        List<Row> out = new ArrayList<>();
        try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(ipc), alloc)) {
            VectorSchemaRoot v = r.getVectorSchemaRoot();
            assertTrue(r.loadNextBatch());
            for (int i = 0; i < v.getRowCount(); i++) {
                if (checkSystemColumns) {
                    assertEquals(KEY_GROUPS[i], ((IntVector) v.getVector(0)).get(i));
                    assertArrayEquals(KEYS[i], ((VarBinaryVector) v.getVector(1)).get(i));
                    BigIntVector t = (BigIntVector) v.getVector(2);
                    assertEquals(TIMESTAMPS[i], t.isNull(i) ? null : t.get(i));
                }
                Object[] values = new Object[COLUMNS.length];
                for (int c = 0; c < values.length; c++) {
                    values[c] = ValueReader.create(row.fieldTypes().get(c), (FieldVector) v.getVector(c + 3)).read(i);
                }
                out.add(Row.of(values));
            }
        }
        return out;
    }

    @Test
    void goInputBatchReadsToTheGoldenRows() throws Exception {
        List<Row> got = readInput(file("input_batch.arrow"), true);
        List<Row> want = rows();
        assertEquals(want.size(), got.size());
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i).toString(), got.get(i).toString(), "row " + i);
        }
    }

    @Test
    void javaInputBatchHoldsTheSameValues() throws Exception {
        List<Row> want = rows();
        byte[] ipc;
        try (BatchWriter w = new BatchWriter(alloc, 16 << 20, TypeMapping.rowFields(rowType()))) {
            for (int i = 0; i < want.size(); i++) {
                w.append(KEY_GROUPS[i], KEYS[i], TIMESTAMPS[i] != null, TIMESTAMPS[i] == null ? 0 : TIMESTAMPS[i], want.get(i));
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            w.finish(out);
            ipc = out.toByteArray();
        }
        List<Row> got = readInput(ipc, true);
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i).toString(), got.get(i).toString(), "row " + i);
        }
    }

    @Test
    void gatheredBatchIsTheSameStream() throws Exception {
        List<Row> want = rows();
        try (BatchWriter copied = new BatchWriter(alloc, 16 << 20, TypeMapping.rowFields(rowType()));
                BatchWriter gathered = new BatchWriter(alloc, 16 << 20, TypeMapping.rowFields(rowType()))) {
            for (int round = 0; round < 2; round++) { // the second batch reuses the vectors
                for (int i = 0; i < want.size(); i++) {
                    boolean hasTs = TIMESTAMPS[i] != null;
                    long ts = hasTs ? TIMESTAMPS[i] : 0;
                    copied.append(KEY_GROUPS[i], KEYS[i], hasTs, ts, want.get(i));
                    gathered.append(KEY_GROUPS[i], KEYS[i], hasTs, ts, want.get(i));
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                copied.finish(out);
                java.util.List<java.nio.ByteBuffer> parts = new java.util.ArrayList<>();
                assertEquals(want.size(), gathered.finishGathered(parts));
                ByteArrayOutputStream joined = new ByteArrayOutputStream();
                for (java.nio.ByteBuffer p : parts) {
                    byte[] b = new byte[p.remaining()];
                    p.duplicate().get(b);
                    joined.write(b);
                }
                org.junit.jupiter.api.Assertions.assertTrue(parts.stream().anyMatch(java.nio.ByteBuffer::isDirect),
                        "the vectors' buffers are handed on as they are");
                gathered.reset();
                org.junit.jupiter.api.Assertions.assertArrayEquals(out.toByteArray(), joined.toByteArray(), "round " + round);
                assertEquals(0, gathered.rows());
            }
        }
    }
}
