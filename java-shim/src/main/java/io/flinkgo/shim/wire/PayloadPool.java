package io.flinkgo.shim.wire;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * A few payload arrays handed from the reader thread to the task thread and back, so that a
 * steady stream of large OUTPUT frames does not allocate (and the JVM zero) a new array of
 * close to a megabyte for every frame.
 *
 * <p>Design note: an OUTPUT payload of 4096 200-byte rows is about 850 KB. Allocating it was
 * about a third of the reader thread's time in HopBench, the JVM zeroing memory that the socket
 * read overwrites at once. The pool keeps at most {@code capacity} arrays of at most {@code
 * maxRetained} bytes each, so what it holds is bounded; an array that is never given back
 * (a frame that failed to apply, a task that is shutting down) is garbage like any other.
 *
 * <p>Thread safety: {@link #take} and {@link #give} may be called from different threads. An
 * array must not be used after it has been given back.
 */
public final class PayloadPool {
    private final ArrayBlockingQueue<byte[]> free;
    private final int maxRetained;

    /**
     * @param capacity how many arrays the pool keeps at most (at least 1)
     * @param maxRetained the largest array it keeps, in bytes; larger ones are left to the GC
     */
    public PayloadPool(int capacity, int maxRetained) {
        if (capacity < 1 || maxRetained < 1) {
            throw new IllegalArgumentException("payload pool needs capacity >= 1 and maxRetained >= 1, got "
                    + capacity + " and " + maxRetained);
        }
        this.free = new ArrayBlockingQueue<>(capacity);
        this.maxRetained = maxRetained;
    }

    /**
     * An array of at least {@code n} bytes. Its contents are whatever the last user left: the
     * caller overwrites the first {@code n} bytes and reads no further.
     */
    public byte[] take(int n) {
        byte[] b = free.poll();
        if (b != null && b.length >= n) {
            return b;
        }
        // None free, or one too small for this frame (it is dropped: the next ones are likely
        // as large). Some headroom lets a slightly larger frame reuse the new array.
        long want = (long) n + (n >>> 3);
        return new byte[(int) Math.min(want, Integer.MAX_VALUE - 8)];
    }

    /** Gives {@code b} back; kept if there is room and it is not above the size limit. */
    public void give(byte[] b) {
        if (b != null && b.length <= maxRetained) {
            free.offer(b);
        }
    }

    /** How many arrays are free now (tests). */
    int freeCount() {
        return free.size();
    }
}
