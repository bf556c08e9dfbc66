package io.flinkgo.shim.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.Row;

/**
 * A test sink that commits like a two-phase-commit sink, so it stays exact across failures and
 * restarts (unlike {@link CollectingSink}): the rows that arrive between two barriers are staged
 * at the checkpoint, kept in operator state until that checkpoint completes, and then committed
 * to a static map under (checkpoint id, subtask). A restore commits what the restored state still
 * holds (its checkpoint completed by definition); the commit is idempotent per (checkpoint id,
 * subtask), so a commit that both the notification and a restore perform counts once. Rows of a
 * checkpoint that never completes are dropped with the failed attempt. The final checkpoint after
 * the end of input commits the rest (Flink waits for it before the tasks finish).
 */
final class CommittingCollector extends AbstractStreamOperator<Void> implements OneInputStreamOperator<Row, Void> {
    private static final long serialVersionUID = 1L;

    /** Committed rows: test name → "checkpoint/subtask" → rows. */
    private static final Map<String, Map<String, List<Row>>> COMMITTED = new ConcurrentHashMap<>();

    private final String name;
    private final TypeInformation<Row> rowType;

    private transient List<Row> pending;
    private transient TreeMap<Long, List<Row>> staged;
    private transient ListState<Tuple3<Long, Integer, Row>> stagedState;
    private transient int subtask;

    private CommittingCollector(String name, TypeInformation<Row> rowType) {
        this.name = name;
        this.rowType = rowType;
    }

    /** Adds the collector at the end of {@code in} (parallelism 1). */
    static void addTo(DataStream<Row> in, String name) {
        in.transform("committing-collector", Types.VOID, new CommittingCollector(name, in.getType()))
                .setParallelism(1)
                .uid("committing-collector");
    }

    /** Forgets the rows committed under {@code name}. */
    static void reset(String name) {
        COMMITTED.remove(name);
    }

    /** Every committed row, in commit order per (checkpoint, subtask). */
    static List<Row> committed(String name) {
        List<Row> out = new ArrayList<>();
        new TreeMap<>(COMMITTED.getOrDefault(name, Map.of())).values().forEach(out::addAll);
        return out;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        pending = new ArrayList<>();
        staged = new TreeMap<>();
        stagedState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(
                "staged-rows", new TupleTypeInfo<>(Types.LONG, Types.INT, rowType)));
        if (context.isRestored()) {
            TreeMap<String, List<Row>> restored = new TreeMap<>();
            for (Tuple3<Long, Integer, Row> t : stagedState.get()) {
                restored.computeIfAbsent(txn(t.f0, t.f1), k -> new ArrayList<>()).add(t.f2);
            }
            restored.forEach(this::commit);
        }
    }

    @Override
    public void processElement(StreamRecord<Row> element) {
        pending.add(element.getValue());
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        staged.put(context.getCheckpointId(), pending);
        pending = new ArrayList<>();
        List<Tuple3<Long, Integer, Row>> all = new ArrayList<>();
        staged.forEach((cp, rows) -> rows.forEach(r -> all.add(Tuple3.of(cp, subtask, r))));
        stagedState.update(all);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        var done = staged.headMap(checkpointId, true);
        done.forEach((cp, rows) -> commit(txn(cp, subtask), rows));
        done.clear();
    }

    private void commit(String txn, List<Row> rows) {
        COMMITTED.computeIfAbsent(name, n -> new ConcurrentHashMap<>()).putIfAbsent(txn, List.copyOf(rows));
    }

    private static String txn(long checkpointId, int subtask) {
        return String.format("%010d/%03d", checkpointId, subtask);
    }
}
