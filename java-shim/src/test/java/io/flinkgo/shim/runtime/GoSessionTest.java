package io.flinkgo.shim.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.fake.FakeBinary;
import io.flinkgo.shim.wire.FrameType;
import io.flinkgo.shim.wire.Messages;

/** The handshake against a fake Go peer (a JVM speaking the Go side of the protocol). */
class GoSessionTest {
    @TempDir
    Path tmp;

    private GoSession.StartSpec spec(Path binary) {
        return spec(binary, 4 << 20);
    }

    private GoSession.StartSpec spec(Path binary, int socketBuffer) {
        Messages.Open open = new Messages.Open("order-scoring", Map.of("go.batch.size", "4"), "job", "op", 0, 1, 128, 0, 127, 0,
                new byte[0], 0);
        return new GoSession.StartSpec(binary.toString(), "[test]", tmp, open, List.of(), List.of(), 30_000, null, socketBuffer);
    }

    @Test
    void badSocketBufferFailsTheStartAndLeavesNothingBehind() throws Exception {
        Path bin = FakeBinary.write(tmp, "fake-ok", Map.of());
        GoProcessException e = assertThrows(GoProcessException.class, () -> GoSession.start(spec(bin, -1)));
        assertTrue(e.getMessage().contains("socket send buffer must be >= 0 bytes, got -1"), e.getMessage());
        try (var dirs = Files.list(tmp)) {
            assertFalse(dirs.anyMatch(p -> p.getFileName().toString().startsWith("flinkgo-")), "socket dir removed");
        }
    }

    @Test
    void handshakeReachesReadyAndCloseIsOrderly() throws Exception {
        Path bin = FakeBinary.write(tmp, "fake-ok", Map.of());
        GoSession s = GoSession.start(spec(bin));
        try {
            assertEquals("fake-java/1", s.hello().runtime());
            assertEquals(64, s.ready().credit());
            assertTrue(s.process().isAlive());
            try (var dirs = Files.list(tmp)) {
                Path dir = dirs.filter(p -> p.getFileName().toString().startsWith("flinkgo-")).findFirst().orElseThrow();
                assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
                assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(dir.resolve("s.sock"))));
            }
        } finally {
            s.close(true, 10_000);
        }
        assertEquals(0, s.process().exitCode());
        try (var dirs = Files.list(tmp)) {
            assertFalse(dirs.anyMatch(p -> p.getFileName().toString().startsWith("flinkgo-")), "socket dir removed");
        }
        s.close(true, 10_000); // idempotent
    }

    @Test
    void badTokenIsRejected() throws Exception {
        Path bin = FakeBinary.write(tmp, "fake-token", Map.of("FAKE_MODE", "bad_token"));
        GoProcessException e = assertThrows(GoProcessException.class, () -> GoSession.start(spec(bin)));
        assertTrue(e.getMessage().contains("bad_token") && e.getMessage().contains("FLINKGO_TOKEN"), e.getMessage());
        assertTrue(e.getMessage().contains("pid ") && e.getMessage().contains(bin.toString()), e.getMessage());
    }

    @Test
    void versionMismatchNamesBothVersions() throws Exception {
        Path bin = FakeBinary.write(tmp, "fake-version", Map.of("FAKE_MODE", "bad_version"));
        GoProcessException e = assertThrows(GoProcessException.class, () -> GoSession.start(spec(bin)));
        assertTrue(e.getMessage().contains("version_mismatch") && e.getMessage().contains("protocol 2")
                && e.getMessage().contains("protocol 1"), e.getMessage());
        // The fake logs the ERROR frame it got before exiting: the shim told Go too.
        assertTrue(e.getMessage().contains("fake: expected OPEN") || e.getMessage().contains("ERROR"), e.getMessage());
    }

    @Test
    void processThatExitsEarlyIsNamedWithExitCodeAndStderr() throws Exception {
        Path bin = FakeBinary.write(tmp, "fake-exit", Map.of("FAKE_MODE", "exit_early"));
        GoProcessException e = assertThrows(GoProcessException.class, () -> GoSession.start(spec(bin)));
        assertTrue(e.getMessage().contains("exit code 3") && e.getMessage().contains("cannot start"), e.getMessage());
    }

    @Test
    void missingBinary() {
        Exception e = assertThrows(Exception.class, () -> GoSession.start(spec(tmp.resolve("nope"))));
        assertTrue(e.getMessage().contains("nope"), e.getMessage());
    }

    @Test
    void describeOfTheFake() throws Exception {
        Path bin = FakeBinary.write(tmp, "fake-describe", Map.of());
        Manifest m = Manifest.describe(bin.toString(), 30_000);
        assertEquals("order-scoring", m.agent(null, bin.toString()).name());
        assertEquals(FrameType.HELLO.code(), 1);
    }
}
