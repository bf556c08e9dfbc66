package io.flinkgo.shim;

import java.io.File;
import java.nio.file.Path;
import java.util.List;

import org.apache.flink.api.common.cache.DistributedCache;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.types.Row;

import io.flinkgo.shim.arrow.ColumnType;
import io.flinkgo.shim.arrow.TypeMapping;
import io.flinkgo.shim.runtime.Manifest;

/**
 * The entry point: run a flinkgo agent on a keyed stream.
 *
 * <pre>{@code
 * GoAgentConfig config = GoAgentConfig.builder().binary("/opt/agents/scoring").build();
 * DataStream<Row> out = GoAgents.connect(orders.keyBy(o -> o.getField("customer")), config);
 * }</pre>
 *
 * <p>While the job graph is built, {@code connect} runs {@code <go.binary> describe}, picks the
 * agent, checks the options and the input type, and types the output stream with the agent's
 * output columns. Every problem is an {@link IllegalArgumentException} raised here, before
 * anything runs.
 */
public final class GoAgents {
    /** How long {@code describe} may take. */
    public static final long DESCRIBE_TIMEOUT_MS = 30_000;

    private GoAgents() {}

    /**
     * Runs the agent on a keyed stream of Rows with named fields ({@code RowTypeInfo}) or of
     * POJOs ({@code PojoTypeInfo}; columns in Flink's POJO field order, i.e. sorted by name).
     * One generic method serves both: a {@code KeyedStream<Row, K>} is a {@code KeyedStream<T, K>}
     * (two overloads would have the same erasure).
     *
     * @return the agent's output rows, typed from its describe manifest
     * @throws IllegalArgumentException for a missing binary, an unknown agent or option, an
     *     unsupported input field type (naming the field), or a manifest of another protocol
     */
    public static <T, K> SingleOutputStreamOperator<Row> connect(KeyedStream<T, K> input, GoAgentConfig config) {
        TypeInformation<T> inputType = input.getType();
        // Fails here, naming the field, if a column type is not supported.
        TypeMapping.inputFields(inputType);

        String binary = config.get(GoAgentOptions.GO_BINARY);
        String local = localBinary(binary, input.getExecutionEnvironment().getCachedFiles());
        Manifest manifest = Manifest.describe(local, DESCRIBE_TIMEOUT_MS);
        Manifest.Agent agent = manifest.agent(config.get(GoAgentOptions.GO_AGENT), binary);
        config.checkKnown(agent.name(), agent.options());

        GoAgentSpec spec = new GoAgentSpec(config, inputType, agent.name(), agent.output());
        ColumnType outRow = spec.outputRowType();
        RowTypeInfo outType = TypeMapping.outputRowType(outRow);
        GoAgentOperatorFactory<T> factory = new GoAgentOperatorFactory<>(spec);
        return input.transform("GoAgent(" + agent.name() + ")", outType, factory);
    }

    /**
     * The path at which the client can run {@code describe}: {@code go.binary} itself when it is
     * absolute, else the local source of the distributed-cache entry of that name.
     */
    static String localBinary(String binary, List<Tuple2<String, DistributedCache.DistributedCacheEntry>> cached) {
        if (Path.of(binary).isAbsolute()) {
            if (!new File(binary).isFile()) {
                throw new IllegalArgumentException("option go.binary: " + binary + " does not exist or is not a file");
            }
            return binary;
        }
        for (Tuple2<String, DistributedCache.DistributedCacheEntry> e : cached) {
            if (e.f0.equals(binary)) {
                String path = e.f1.filePath;
                if (path.startsWith("file:")) {
                    path = java.net.URI.create(path).getPath();
                }
                return path;
            }
        }
        throw new IllegalArgumentException("option go.binary: '" + binary + "' is neither an absolute path nor the name of a "
                + "file registered with env.registerCachedFile(path, \"" + binary + "\", true)");
    }
}
