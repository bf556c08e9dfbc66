package io.flinkgo.shim.runtime;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import io.flinkgo.shim.wire.Protocol;

/**
 * The {@code <binary> describe} manifest (protocol.md, "The describe manifest"): the agents a
 * binary holds, their output columns as Flink SQL type names and the options they declare. Read
 * while the job graph is built so that the output type is known before anything runs.
 */
public final class Manifest {
    /** One output column: name and Flink SQL type name. */
    public record Column(String name, String type) implements java.io.Serializable {}

    /** One agent of the binary. */
    public record Agent(String name, List<Column> output, List<String> options) {}

    private final int protocol;
    private final String runtime;
    private final List<Agent> agents;

    private Manifest(int protocol, String runtime, List<Agent> agents) {
        this.protocol = protocol;
        this.runtime = runtime;
        this.agents = agents;
    }

    public int protocol() {
        return protocol;
    }

    public String runtime() {
        return runtime;
    }

    public List<Agent> agents() {
        return agents;
    }

    /** Parses the JSON text; any structural problem is an IllegalArgumentException. */
    public static Manifest parse(String json, String source) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException(source + ": describe output is not JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException(source + ": describe output is not a JSON object");
        }
        int protocol = requireInt(root, "protocol", source);
        String runtime = root.path("runtime").asText("");
        List<Agent> agents = new ArrayList<>();
        JsonNode arr = root.path("agents");
        if (!arr.isArray() || arr.isEmpty()) {
            throw new IllegalArgumentException(source + ": describe output lists no agents");
        }
        for (JsonNode a : arr) {
            String name = requireText(a, "name", source);
            List<Column> cols = new ArrayList<>();
            for (JsonNode c : a.path("output")) {
                cols.add(new Column(requireText(c, "name", source + " agent " + name),
                        requireText(c, "type", source + " agent " + name)));
            }
            if (cols.isEmpty()) {
                throw new IllegalArgumentException(source + ": agent '" + name + "' declares no output columns");
            }
            List<String> opts = new ArrayList<>();
            for (JsonNode o : a.path("options")) {
                opts.add(requireText(o, "name", source + " agent " + name));
            }
            agents.add(new Agent(name, Collections.unmodifiableList(cols), Collections.unmodifiableList(opts)));
        }
        return new Manifest(protocol, runtime, Collections.unmodifiableList(agents));
    }

    private static int requireInt(JsonNode n, String key, String source) {
        JsonNode v = n.get(key);
        if (v == null || !v.canConvertToInt()) {
            throw new IllegalArgumentException(source + ": describe output has no integer '" + key + "'");
        }
        return v.asInt();
    }

    private static String requireText(JsonNode n, String key, String source) {
        JsonNode v = n.get(key);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IllegalArgumentException(source + ": describe output has no string '" + key + "' in " + n);
        }
        return v.asText();
    }

    /**
     * Runs {@code <binary> describe} and parses its output.
     *
     * @throws IllegalArgumentException if the binary is missing, fails, hangs or prints junk,
     *     or speaks another protocol version
     */
    public static Manifest describe(String binary, long timeoutMillis) {
        Process p;
        try {
            p = new ProcessBuilder(binary, "describe").redirectErrorStream(false).start();
        } catch (IOException e) {
            throw new IllegalArgumentException("option go.binary: cannot run '" + binary + " describe': " + e.getMessage(), e);
        }
        try {
            try {
                p.getOutputStream().close();
            } catch (IOException ignored) {
                // describe reads no input
            }
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread errPump = new Thread(() -> copy(p.getErrorStream(), err), "flinkgo-describe-stderr");
            errPump.setDaemon(true);
            errPump.start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Thread outPump = new Thread(() -> copy(p.getInputStream(), out), "flinkgo-describe-stdout");
            outPump.setDaemon(true);
            outPump.start();
            if (!p.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalArgumentException("'" + binary + " describe' did not finish within " + timeoutMillis + " ms");
            }
            outPump.join(1000);
            errPump.join(1000);
            String stderr = err.toString(StandardCharsets.UTF_8).trim();
            if (p.exitValue() != 0) {
                throw new IllegalArgumentException("'" + binary + " describe' exited with code " + p.exitValue()
                        + (stderr.isEmpty() ? "" : ": " + stderr));
            }
            Manifest m = parse(out.toString(StandardCharsets.UTF_8), "'" + binary + " describe'");
            if (m.protocol() != Protocol.VERSION) {
                throw new IllegalArgumentException("'" + binary + "' speaks flinkgo protocol " + m.protocol()
                        + " (runtime " + m.runtime() + "), this shim speaks protocol " + Protocol.VERSION
                        + "; build the binary with a flinkgo release that matches the shim");
            }
            return m;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running '" + binary + " describe'", e);
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException ignored) {
            // the process went away; what was read is kept
        }
    }

    /**
     * The agent to run: {@code name}, or the only agent when {@code name} is null.
     *
     * @throws IllegalArgumentException naming the agents the binary has
     */
    public Agent agent(String name, String binary) {
        List<String> names = new ArrayList<>();
        for (Agent a : agents) {
            names.add(a.name());
            if (a.name().equals(name)) {
                return a;
            }
        }
        if (name == null && agents.size() == 1) {
            return agents.get(0);
        }
        throw new IllegalArgumentException(name == null
                ? "option go.agent: required, '" + binary + "' holds several agents " + names
                : "option go.agent: '" + binary + "' holds no agent '" + name + "'; it holds " + names);
    }
}
