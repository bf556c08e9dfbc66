package io.flinkgo.shim;

import java.io.File;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.cache.DistributedCache;
import org.apache.flink.api.common.typeinfo.TypeInformation;

import io.flinkgo.shim.arrow.ColumnType;
import io.flinkgo.shim.arrow.SqlTypeParser;
import io.flinkgo.shim.runtime.Manifest;

/**
 * Everything the operator needs, fixed when the job graph is built: the options, the input
 * type, the agent's name and its output columns (from the describe manifest). Serialisable; it
 * travels inside {@link GoAgentOperatorFactory}.
 */
final class GoAgentSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    final GoAgentConfig config;
    final TypeInformation<?> inputType;
    final String agentName;
    final List<Manifest.Column> outputColumns;

    GoAgentSpec(GoAgentConfig config, TypeInformation<?> inputType, String agentName, List<Manifest.Column> outputColumns) {
        this.config = config;
        this.inputType = inputType;
        this.agentName = agentName;
        this.outputColumns = List.copyOf(outputColumns);
    }

    /** The ROW type of the output's user columns. */
    ColumnType outputRowType() {
        List<String> names = new ArrayList<>();
        List<ColumnType> types = new ArrayList<>();
        for (Manifest.Column c : outputColumns) {
            names.add(c.name());
            try {
                types.add(SqlTypeParser.parse(c.type()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("agent '" + agentName + "' output column '" + c.name() + "': " + e.getMessage(), e);
            }
        }
        return ColumnType.row(names, types);
    }

    /**
     * The binary to run: {@code go.binary} as an absolute path, or else a file of that name in
     * Flink's distributed cache (made executable, as the cache may not keep the mode bits).
     */
    static String resolveBinary(String value, DistributedCache cache) {
        Path p = Path.of(value);
        if (p.isAbsolute()) {
            if (!Files.isRegularFile(p)) {
                throw new IllegalArgumentException("option go.binary: " + value + " does not exist or is not a file");
            }
            if (!Files.isExecutable(p)) {
                throw new IllegalArgumentException("option go.binary: " + value + " is not executable (chmod +x it)");
            }
            return value;
        }
        if (cache == null) {
            throw new IllegalArgumentException("option go.binary: '" + value
                    + "' is neither an absolute path nor resolvable (no distributed cache here)");
        }
        File f;
        try {
            f = cache.getFile(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("option go.binary: '" + value + "' is not an absolute path and not a file "
                    + "registered in the distributed cache (env.registerCachedFile(path, \"" + value + "\", true)): "
                    + e.getMessage(), e);
        }
        if (!f.canExecute() && !f.setExecutable(true, true)) {
            throw new IllegalArgumentException("option go.binary: cannot make the cached file " + f + " executable");
        }
        return f.getAbsolutePath();
    }
}
