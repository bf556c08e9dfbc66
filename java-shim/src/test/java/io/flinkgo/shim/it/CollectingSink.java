package io.flinkgo.shim.it;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.types.Row;

/**
 * A test sink that keeps rows in a static list per test name, counting checkpoints
 * ({@code flush(false)} runs when a barrier reaches the sink). Like a transactional sink it
 * makes rows visible only at a barrier or at the end of input: rows that arrive after the last
 * barrier of a stop-with-savepoint are dropped, as an uncommitted transaction would be (the
 * savepoint holds the state that produces them again). It does not roll back on failures: use
 * it only in failure-free runs.
 */
final class CollectingSink implements Sink<Row> {
    private static final long serialVersionUID = 1L;

    static final Map<String, List<Row>> ROWS = new ConcurrentHashMap<>();
    static final Map<String, AtomicInteger> CHECKPOINTS = new ConcurrentHashMap<>();

    private final String name;

    CollectingSink(String name) {
        this.name = name;
        ROWS.putIfAbsent(name, new CopyOnWriteArrayList<>());
        CHECKPOINTS.putIfAbsent(name, new AtomicInteger());
    }

    static List<Row> rows(String name) {
        return ROWS.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>());
    }

    static int checkpoints(String name) {
        return CHECKPOINTS.computeIfAbsent(name, n -> new AtomicInteger()).get();
    }

    @Override
    public SinkWriter<Row> createWriter(WriterInitContext context) {
        List<Row> rows = rows(name);
        AtomicInteger cps = CHECKPOINTS.computeIfAbsent(name, n -> new AtomicInteger());
        return new SinkWriter<>() {
            private final List<Row> pending = new java.util.ArrayList<>();

            @Override
            public void write(Row element, Context ctx) {
                pending.add(element);
            }

            @Override
            public void flush(boolean endOfInput) {
                if (!endOfInput) {
                    cps.incrementAndGet();
                }
                rows.addAll(pending);
                pending.clear();
            }

            @Override
            public void close() {
                pending.clear(); // after the final barrier of a stop-with-savepoint: not committed
            }
        };
    }
}
