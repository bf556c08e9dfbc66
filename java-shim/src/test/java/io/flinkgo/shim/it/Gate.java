package io.flinkgo.shim.it;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;

/**
 * A rate limiter for {@code DataGeneratorSource} that lets records through only as the test
 * releases permits ({@link #release}), so a test decides which rows exist before and after a
 * checkpoint. Waiting is asynchronous (the source's mailbox stays free, so checkpoints still run).
 * Gates live in a static map: the MiniCluster runs in the test's JVM.
 */
final class Gate {
    private static final Map<String, Gate> GATES = new ConcurrentHashMap<>();

    private long permits;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

    private record Waiter(int n, CompletableFuture<Void> f) {}

    private Gate() {}

    /** Creates (or resets) the gate {@code name} with no permits. */
    static void create(String name) {
        GATES.put(name, new Gate());
    }

    /** Lets {@code n} more records through gate {@code name}. */
    static void release(String name, long n) {
        GATES.get(name).add(n);
    }

    /** A rate-limiter strategy reading gate {@code name}. */
    static <S extends SourceSplit> RateLimiterStrategy<S> strategy(String name) {
        return parallelism -> new RateLimiter<S>() {
            @Override
            public CompletionStage<Void> acquire(int n) {
                return GATES.get(name).take(n);
            }
        };
    }

    private synchronized CompletionStage<Void> take(int n) {
        if (waiters.isEmpty() && permits >= n) {
            permits -= n;
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        waiters.add(new Waiter(n, f));
        return f;
    }

    private void add(long n) {
        ArrayDeque<CompletableFuture<Void>> ready = new ArrayDeque<>();
        synchronized (this) {
            permits = Math.min(Long.MAX_VALUE / 2, permits + n);
            while (!waiters.isEmpty() && permits >= waiters.peek().n()) {
                Waiter w = waiters.poll();
                permits -= w.n();
                ready.add(w.f());
            }
        }
        ready.forEach(f -> f.complete(null)); // outside the lock: completion runs callbacks
    }
}
