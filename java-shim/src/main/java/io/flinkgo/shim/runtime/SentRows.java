package io.flinkgo.shim.runtime;

import io.flinkgo.shim.wire.ErrorCode;
import io.flinkgo.shim.wire.ProtocolException;

/**
 * The input rows the operator sent to Go, kept so that OUTPUT_REF can name them instead of
 * carrying their values (protocol.md, "OUTPUT_REF"). Rows are numbered from 0 in the order they
 * went into DATA; the rows from the horizon ({@code keep_from} of CREDIT) to the last one sent are
 * kept, the ones before it are dropped (their slots cleared, so the garbage collector takes them).
 * Go keeps the horizon within about a credit window of what it granted, which bounds what is kept.
 *
 * <p>Task thread only.
 */
public final class SentRows {
    /** The most rows kept at once; Go's horizon keeps far fewer (a credit window). */
    public static final int MAX_KEPT = 1 << 24;

    /** Receives a referenced row with the timestamp it was sent with. */
    @FunctionalInterface
    public interface Sink {
        void emit(Object row, boolean hasTimestamp, long timestamp) throws Exception;
    }

    private Object[] rows;
    private long[] timestamps;
    private boolean[] hasTimestamp;
    private int mask;
    private long next; // the number of the next row sent
    private long keepFrom; // rows below it are dropped

    public SentRows(int initialCapacity) {
        int cap = Integer.highestOneBit(Math.max(16, Math.min(initialCapacity, MAX_KEPT)) * 2 - 1);
        allocate(cap);
    }

    private void allocate(int cap) {
        rows = new Object[cap];
        timestamps = new long[cap];
        hasTimestamp = new boolean[cap];
        mask = cap - 1;
    }

    /** Rows sent so far (the number the next row gets). */
    public long sent() {
        return next;
    }

    /** The horizon: the first row still kept (if sent). */
    public long keepFrom() {
        return keepFrom;
    }

    /** Rows kept now. */
    public int kept() {
        return (int) Math.max(0, next - keepFrom);
    }

    /** Records the row just appended to the DATA batch. */
    public void add(Object row, boolean hasTs, long ts) throws ProtocolException {
        if (next >= keepFrom) {
            if (next - keepFrom == rows.length) {
                grow();
            }
            int i = (int) (next & mask);
            rows[i] = row;
            timestamps[i] = ts;
            hasTimestamp[i] = hasTs;
        }
        next++;
    }

    private void grow() throws ProtocolException {
        int cap = rows.length;
        if (cap >= MAX_KEPT) {
            throw new ProtocolException(ErrorCode.UNEXPECTED_FRAME, "the Go process's reference horizon (keep_from "
                    + keepFrom + ") stayed more than " + MAX_KEPT + " rows behind the " + next
                    + " rows sent; it must advance it with its credit (protocol.md, \"OUTPUT_REF\")");
        }
        Object[] r = rows;
        long[] t = timestamps;
        boolean[] h = hasTimestamp;
        int oldMask = mask;
        allocate(cap * 2);
        for (long n = keepFrom; n < next; n++) {
            int from = (int) (n & oldMask);
            int to = (int) (n & mask);
            rows[to] = r[from];
            timestamps[to] = t[from];
            hasTimestamp[to] = h[from];
        }
    }

    /** Moves the horizon to {@code h} (CREDIT's keep_from): the rows before it are dropped. */
    public void advance(long h) throws ProtocolException {
        if (h < keepFrom) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "CREDIT's keep_from went back from " + keepFrom
                    + " to " + h + "; the reference horizon never decreases");
        }
        for (long n = keepFrom, end = Math.min(h, next); n < end; n++) {
            rows[(int) (n & mask)] = null;
        }
        keepFrom = h;
    }

    /** Emits {@code count} rows from row {@code first} on, in order; a run not kept is an error. */
    public void emit(long first, long count, Sink sink) throws Exception {
        check(first, count);
        for (long n = first, end = first + count; n < end; n++) {
            int i = (int) (n & mask);
            sink.emit(rows[i], hasTimestamp[i], timestamps[i]);
        }
    }

    /** Checks that the {@code count} rows from row {@code first} on are kept. */
    public void check(long first, long count) throws ProtocolException {
        if (first < keepFrom || first > next || count > next - first) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "OUTPUT_REF names input rows " + first + " to "
                    + (first + count - 1) + ", but the operator keeps rows " + keepFrom + " to " + (next - 1)
                    + " (" + next + " sent, horizon " + keepFrom + ")");
        }
    }
}
