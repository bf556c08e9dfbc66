package io.flinkgo.shim.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ListTypeInfo;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.junit.jupiter.api.Test;

class TypeMappingTest {
    /** A POJO: Flink orders its fields by name. */
    public static class Order {
        public String customer;
        public double amount;
        public Item[] items;
        public java.time.Instant at;
    }

    public static class Item {
        public String sku;
        public int qty;
    }

    static RowTypeInfo allTypes() {
        return (RowTypeInfo) Types.ROW_NAMED(
                new String[] {"b", "i8", "i16", "i32", "i64", "f32", "f64", "s", "bytes", "dec", "ts", "ltz", "date",
                        "arr", "list", "objs", "nested"},
                Types.BOOLEAN, Types.BYTE, Types.SHORT, Types.INT, Types.LONG, Types.FLOAT, Types.DOUBLE, Types.STRING,
                Types.PRIMITIVE_ARRAY(Types.BYTE), Types.BIG_DEC, Types.LOCAL_DATE_TIME, Types.INSTANT, Types.LOCAL_DATE,
                Types.OBJECT_ARRAY(Types.STRING), new ListTypeInfo<>(Types.LONG),
                Types.OBJECT_ARRAY(Types.ROW_NAMED(new String[] {"x"}, Types.INT)),
                Types.ROW_NAMED(new String[] {"name", "tags"}, Types.STRING, Types.OBJECT_ARRAY(Types.STRING)));
    }

    @Test
    void everySupportedTypeMapsToTheProtocolTable() {
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(allTypes());
        Schema s = BatchWriter.inputSchema(fields);
        List<Field> f = s.getFields();
        assertEquals("_key_group", f.get(0).getName());
        assertEquals(new ArrowType.Int(32, true), f.get(0).getType());
        assertTrue(!f.get(0).isNullable() && !f.get(1).isNullable() && f.get(2).isNullable());
        assertEquals(ArrowType.Binary.INSTANCE, f.get(1).getType());
        assertEquals(new ArrowType.Int(64, true), f.get(2).getType());
        Map<String, String> want = new java.util.LinkedHashMap<>();
        want.put("b", "Bool");
        want.put("i8", "Int(8, true)");
        want.put("i16", "Int(16, true)");
        want.put("i32", "Int(32, true)");
        want.put("i64", "Int(64, true)");
        want.put("f32", "FloatingPoint(SINGLE)");
        want.put("f64", "FloatingPoint(DOUBLE)");
        want.put("s", "Utf8");
        want.put("bytes", "Binary");
        want.put("dec", "Decimal(38, 18, 128)");
        want.put("ts", "Timestamp(MICROSECOND, null)");
        want.put("ltz", "Timestamp(MICROSECOND, UTC)");
        want.put("date", "Date(DAY)");
        want.put("arr", "List");
        want.put("list", "List");
        want.put("objs", "List");
        want.put("nested", "Struct");
        int i = 3;
        for (Map.Entry<String, String> e : want.entrySet()) {
            Field field = f.get(i++);
            assertEquals(e.getKey(), field.getName());
            assertEquals(e.getValue(), field.getType().toString(), e.getKey());
            assertTrue(field.isNullable());
        }
        assertEquals("item", f.get(16).getChildren().get(0).getName());
        assertEquals("Struct", f.get(18).getChildren().get(0).getType().toString());
        assertEquals("ROW<b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT, i64 BIGINT, f32 FLOAT, f64 DOUBLE, s STRING, "
                + "bytes BYTES, dec DECIMAL(38, 18), ts TIMESTAMP(6), ltz TIMESTAMP_LTZ(6), date DATE, arr ARRAY<STRING>, "
                + "list ARRAY<BIGINT>, objs ARRAY<ROW<x INT>>, nested ROW<name STRING, tags ARRAY<STRING>>>",
                TypeMapping.rowType(fields).toString());
    }

    @Test
    void pojoFieldByField() {
        List<TypeMapping.InputField> fields = TypeMapping.inputFields(TypeInformation.of(Order.class));
        assertEquals("ROW<amount DOUBLE, at TIMESTAMP_LTZ(6), customer STRING, items ARRAY<ROW<qty INT, sku STRING>>>",
                TypeMapping.rowType(fields).toString());
    }

    @Test
    void unsupportedTypesNameTheFieldPath() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TypeMapping.inputFields(
                Types.ROW_NAMED(new String[] {"a", "m"}, Types.INT, Types.MAP(Types.STRING, Types.INT))));
        assertTrue(e.getMessage().contains("'m'") && e.getMessage().contains("Map"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TypeMapping.inputFields(
                Types.ROW_NAMED(new String[] {"outer"}, Types.ROW_NAMED(new String[] {"t"}, Types.LOCAL_TIME))));
        assertTrue(e.getMessage().contains("'outer.t'") && e.getMessage().contains("LocalTime"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TypeMapping.inputFields(
                Types.ROW_NAMED(new String[] {"xs"}, Types.OBJECT_ARRAY(Types.CHAR))));
        assertTrue(e.getMessage().contains("'xs[]'") && e.getMessage().contains("Character"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TypeMapping.inputFields(
                Types.ROW_NAMED(new String[] {"p"}, Types.PRIMITIVE_ARRAY(Types.INT))));
        assertTrue(e.getMessage().contains("'p'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TypeMapping.inputFields(Types.STRING));
        assertTrue(e.getMessage().contains("RowTypeInfo"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TypeMapping.inputFields(Types.TUPLE(Types.INT, Types.INT)));
        assertTrue(e.getMessage().contains("POJO"), e.getMessage());
    }

    @Test
    void sqlTypeNamesParseAndPrint() {
        for (String t : List.of("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "BYTES",
                "DECIMAL(10, 2)", "TIMESTAMP(6)", "TIMESTAMP_LTZ(6)", "DATE", "ARRAY<INT>",
                "ROW<name STRING, xs ARRAY<ROW<v DOUBLE>>>")) {
            assertEquals(t, SqlTypeParser.parse(t).toString());
        }
        assertEquals("TIMESTAMP(6)", SqlTypeParser.parse("timestamp(3)").toString());
        assertEquals("INT", SqlTypeParser.parse(" integer ").toString());
        assertEquals("ROW<`a b` INT>", SqlTypeParser.parse("ROW<`a b` INT>").toString());
        for (String bad : List.of("MAP<STRING, INT>", "DECIMAL(40, 2)", "TIMESTAMP(9)", "ARRAY<INT", "ROW<a INT, a INT>",
                "INT NOT NULL", "")) {
            assertThrows(IllegalArgumentException.class, () -> SqlTypeParser.parse(bad), bad);
        }
    }

    @Test
    void outputTypeInfoFromManifestTypes() {
        ColumnType row = ColumnType.row(List.of("customer", "score", "tags", "detail"), List.of(
                SqlTypeParser.parse("STRING"), SqlTypeParser.parse("DECIMAL(10, 2)"), SqlTypeParser.parse("ARRAY<STRING>"),
                SqlTypeParser.parse("ROW<at TIMESTAMP_LTZ(6), day DATE, raw BYTES>")));
        RowTypeInfo t = TypeMapping.outputRowType(row);
        assertEquals(List.of("customer", "score", "tags", "detail"), List.of(t.getFieldNames()));
        assertEquals(Types.STRING, t.getTypeAt(0));
        assertEquals(Types.BIG_DEC, t.getTypeAt(1));
        assertEquals(Types.OBJECT_ARRAY(Types.STRING), t.getTypeAt(2));
        assertEquals(Types.ROW_NAMED(new String[] {"at", "day", "raw"}, Types.INSTANT, Types.LOCAL_DATE,
                Types.PRIMITIVE_ARRAY(Types.BYTE)), t.getTypeAt(3));
    }
}
