package io.flinkgo.shim.fake;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/** Writes a shell script that runs {@link FakeGoPeer} in a fresh JVM with the given switches. */
public final class FakeBinary {
    /** First JVM option of every fake process: how tests find them (command lines are cut at 4096 chars). */
    public static final String MARKER = "-Dflinkgo.fake.peer=true";

    private FakeBinary() {}

    public static Path write(Path dir, String name, Map<String, String> env) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        StringBuilder s = new StringBuilder("#!/bin/sh\n");
        for (Map.Entry<String, String> e : env.entrySet()) {
            s.append("export ").append(e.getKey()).append("='").append(e.getValue()).append("'\n");
        }
        s.append("exec '").append(javaBin).append("' ").append(MARKER).append(" -Xmx128m -XX:TieredStopAtLevel=1 -Xshare:auto")
                .append(" --add-opens=java.base/java.nio=ALL-UNNAMED")
                .append(" -cp '").append(System.getProperty("java.class.path")).append("' ")
                .append(FakeGoPeer.class.getName()).append(" \"$@\"\n");
        Path p = dir.resolve(name);
        Files.writeString(p, s.toString());
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
        return p;
    }
}
