package io.flinkgo.shim.tools;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import io.flinkgo.shim.GoAgentOperator;

/**
 * Prints the recovery markers of a flinkgo agent operator from a savepoint or a retained
 * checkpoint, for {@code flinkgo cleanup plan}: one JSON line per marker,
 * {@code {"marker":"<standard base64>"}}. The markers are the operator's union list state
 * {@value GoAgentOperator#MARKER_STATE} (every subtask's marker), read with Flink's State
 * Processor API.
 *
 * <pre>
 * java -cp "$(shim jar):$(Flink classpath with flink-state-processor-api)" \
 *     io.flinkgo.shim.tools.MarkerExport &lt;savepoint or checkpoint path&gt; &lt;operator uid&gt;
 * </pre>
 *
 * Everything but the markers goes to stderr (Flink's log too), so stdout can be piped into
 * {@code flinkgo cleanup plan --markers -}. Exit status 2 for bad arguments, 1 if the path cannot
 * be read or holds no state of that uid.
 */
public final class MarkerExport {
    private MarkerExport() {}

    /** Reads the markers of operator {@code uid} from the savepoint or checkpoint at {@code path}. */
    public static List<byte[]> read(String path, String uid) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        env.setParallelism(1);
        SavepointReader reader = SavepointReader.read(env, path);
        List<byte[]> out = new ArrayList<>();
        try (CloseableIterator<byte[]> it = reader.readUnionState(OperatorIdentifier.forUid(uid),
                GoAgentOperator.MARKER_STATE, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    /** The JSON line of one marker. */
    public static String jsonLine(byte[] marker) {
        return "{\"marker\":\"" + Base64.getEncoder().encodeToString(marker) + "\"}";
    }

    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err); // nothing but markers on stdout
        if (args.length != 2) {
            System.err.println("usage: MarkerExport <savepoint or retained checkpoint path> <uid of the flinkgo agent operator>");
            System.exit(2);
        }
        List<byte[]> markers;
        try {
            markers = read(args[0], args[1]);
        } catch (Exception e) {
            System.err.println("MarkerExport: cannot read the markers of operator uid '" + args[1] + "' from " + args[0]
                    + ": " + e + " (is it a savepoint or retained checkpoint of a job with GoAgents.connect(...).uid(\""
                    + args[1] + "\")?)");
            e.printStackTrace();
            System.exit(1);
            return;
        }
        if (markers.isEmpty()) {
            System.err.println("MarkerExport: operator uid '" + args[1] + "' in " + args[0] + " holds no recovery marker");
            System.exit(1);
        }
        for (byte[] m : markers) {
            out.println(jsonLine(m));
        }
        out.flush();
        System.exit(0);
    }
}
