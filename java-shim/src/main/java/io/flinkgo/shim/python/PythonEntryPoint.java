package io.flinkgo.shim.python;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Row;

import io.flinkgo.shim.AgentOption;
import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgentOptions;
import io.flinkgo.shim.GoAgents;
import io.flinkgo.shim.arrow.TypeMapping;
import io.flinkgo.shim.wire.Protocol;

/**
 * What the Python package {@code flinkgo} calls over py4j. Python calls the steps one by one
 * ({@link #buildConfig}, {@link #checkInputType}, {@link #keyByFields}, {@link #connect}) so
 * that it can turn an {@link IllegalArgumentException} of each step into its own exception
 * class (option, schema, binary) without reading messages.
 *
 * <p>Rows never pass through Python: the key-by happens here, on named fields, because
 * PyFlink's own {@code key_by} produces pickled keys that Go cannot read.
 *
 * <p>Everything here runs on the client while the job graph is built; nothing is called at run
 * time except the serialisable {@link FieldsKey}, {@link FieldKey} and {@link Retype}.
 */
public final class PythonEntryPoint {
    private PythonEntryPoint() {}

    /** The wire protocol version of this shim (the {@code protocol} of the describe manifest). */
    public static int protocolVersion() {
        return Protocol.VERSION;
    }

    /**
     * Every option of {@link GoAgentOptions#ALL} as a JSON array, in declaration order: {@code
     * name}, {@code kind} ({@link AgentOption.Kind}), {@code default} (the canonical string, or
     * null when unset), {@code choices} and {@code doc}. The Python options are tested against it.
     */
    public static String optionsJson() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (AgentOption<?> o : GoAgentOptions.ALL.values()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", o.name());
            m.put("kind", o.kind().name());
            m.put("default", renderDefault(o));
            m.put("choices", o.choices());
            m.put("doc", o.doc());
            out.add(m);
        }
        try {
            return new ObjectMapper().writeValueAsString(out);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the option list as JSON", e);
        }
    }

    private static <T> String renderDefault(AgentOption<T> o) {
        T d = o.defaultValue();
        return d == null ? null : o.render(d);
    }

    /**
     * The canonical string of a known option's value, as passed to Go.
     *
     * @throws IllegalArgumentException for an unknown option or an invalid value, naming the option
     */
    public static String canonicalValue(String name, String value) {
        AgentOption<?> o = GoAgentOptions.ALL.get(name);
        if (o == null) {
            throw new IllegalArgumentException("unknown option '" + name + "'");
        }
        return reparse(o, value);
    }

    private static <T> String reparse(AgentOption<T> o, String raw) {
        return o.render(o.parse(raw));
    }

    /**
     * Builds the config from option strings (known options canonical, agent options as given).
     *
     * @throws IllegalArgumentException naming the option
     */
    public static GoAgentConfig buildConfig(Map<String, String> options) {
        return GoAgentConfig.builder().setAll(options).build();
    }

    /**
     * Checks that every field of the input row type can be sent to Go.
     *
     * @throws IllegalArgumentException naming the field path and its type
     */
    public static void checkInputType(TypeInformation<?> type) {
        TypeMapping.inputFields(type);
    }

    /**
     * Gives a stream of Rows a {@link RowTypeInfo}, for streams whose type only describes Rows
     * in another way (the {@code ExternalTypeInfo} of {@code StreamTableEnvironment#toDataStream}).
     * An identity map, chained to its input.
     */
    public static SingleOutputStreamOperator<Row> retype(DataStream<Row> input, TypeInformation<Row> rowType) {
        if (!(rowType instanceof RowTypeInfo)) {
            throw new IllegalArgumentException("the row type must be a RowTypeInfo, got " + rowType);
        }
        if (!Row.class.equals(input.getType().getTypeClass())) {
            throw new IllegalArgumentException("the input stream does not carry Rows: " + input.getType());
        }
        return input.map(new Retype((RowTypeInfo) rowType)).name("flinkgo-row-type");
    }

    /**
     * Keys a stream of Rows by named fields: a Row of those fields when there are several, the
     * field's own value when there is one.
     *
     * @throws IllegalArgumentException if the stream has no {@link RowTypeInfo}, a name is not
     *     one of its fields, or the field types cannot be a key
     */
    public static KeyedStream<Row, ?> keyByFields(DataStream<Row> input, List<String> keyFields) {
        TypeInformation<Row> type = input.getType();
        if (!(type instanceof RowTypeInfo)) {
            throw new IllegalArgumentException("the input of a Go agent must be a Row with named fields (RowTypeInfo); got " + type);
        }
        RowTypeInfo rowType = (RowTypeInfo) type;
        if (keyFields == null || keyFields.isEmpty()) {
            throw new IllegalArgumentException("key fields: at least one is needed");
        }
        int[] positions = new int[keyFields.size()];
        TypeInformation<?>[] keyTypes = new TypeInformation<?>[positions.length];
        for (int i = 0; i < positions.length; i++) {
            String name = keyFields.get(i);
            int pos = rowType.getFieldIndex(name);
            if (pos < 0) {
                throw new IllegalArgumentException("key field '" + name + "' is not a field of the input row "
                        + List.of(rowType.getFieldNames()));
            }
            positions[i] = pos;
            keyTypes[i] = rowType.getTypeAt(pos);
            if (!keyTypes[i].isKeyType()) {
                throw new IllegalArgumentException("key field '" + name + "' has type " + keyTypes[i] + ", which cannot be a key");
            }
        }
        if (positions.length == 1) {
            return keyBySingle(input, positions[0], keyFields.get(0), keyTypes[0]);
        }
        String[] names = keyFields.toArray(new String[0]);
        return input.keyBy(new FieldsKey(positions, names), new RowTypeInfo(keyTypes, names));
    }

    @SuppressWarnings("unchecked")
    private static <K> KeyedStream<Row, K> keyBySingle(DataStream<Row> input, int position, String name, TypeInformation<?> keyType) {
        return input.keyBy(new FieldKey<K>(position, name), (TypeInformation<K>) keyType);
    }

    /**
     * Runs the agent ({@link GoAgents#connect}).
     *
     * @throws IllegalArgumentException for a binary problem, an unknown agent or option
     */
    public static SingleOutputStreamOperator<Row> connect(KeyedStream<Row, ?> keyed, GoAgentConfig config) {
        return GoAgents.connect(keyed, config);
    }

    /**
     * A field of a Row by position, or by name for a Row built with {@code Row.withNames} (which
     * has no positions); a Row with named positions answers both.
     */
    static Object field(Row row, int position, String name) {
        return row.getFieldNames(false) == null ? row.getField(position) : row.getField(name);
    }

    /** The key of several fields: a positional Row of them. */
    static final class FieldsKey implements KeySelector<Row, Row> {
        private static final long serialVersionUID = 1L;
        private final int[] positions;
        private final String[] names;

        FieldsKey(int[] positions, String[] names) {
            this.positions = positions.clone();
            this.names = names.clone();
        }

        @Override
        public Row getKey(Row row) {
            Row key = new Row(positions.length);
            for (int i = 0; i < positions.length; i++) {
                key.setField(i, field(row, positions[i], names[i]));
            }
            return key;
        }
    }

    /** The key of one field: its value. */
    static final class FieldKey<K> implements KeySelector<Row, K> {
        private static final long serialVersionUID = 1L;
        private final int position;
        private final String name;

        FieldKey(int position, String name) {
            this.position = position;
            this.name = name;
        }

        @Override
        @SuppressWarnings("unchecked")
        public K getKey(Row row) {
            return (K) field(row, position, name);
        }
    }

    /** Identity map that declares a {@link RowTypeInfo}. */
    static final class Retype implements MapFunction<Row, Row>, ResultTypeQueryable<Row> {
        private static final long serialVersionUID = 1L;
        private final RowTypeInfo type;

        Retype(RowTypeInfo type) {
            this.type = type;
        }

        @Override
        public Row map(Row row) {
            return row;
        }

        @Override
        public TypeInformation<Row> getProducedType() {
            return type;
        }
    }
}
