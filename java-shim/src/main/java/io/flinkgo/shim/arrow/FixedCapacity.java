package io.flinkgo.shim.arrow;

import org.apache.arrow.vector.BaseFixedWidthVector;

/**
 * The row capacity of a top-level fixed-width vector as last seen, so that a write below it
 * can use the vector's unchecked {@code set}.
 *
 * <p>Design note: {@code setSafe} recomputes the capacity of the value and validity buffers
 * (two divisions) for every value; with three fixed-width columns per row that was about 5 %
 * of the task thread. Between batches the vectors keep their buffers ({@link
 * BatchWriter#clearForReuse}), so the capacity only changes when {@link #ensure} grows it; a
 * new batch asks the vector again all the same ({@link #reset}).
 */
final class FixedCapacity {
    private final BaseFixedWidthVector v;
    private int capacity = -1;

    FixedCapacity(BaseFixedWidthVector v) {
        this.v = v;
    }

    /** Grows the vector, if it must, so that row {@code index} can be set. */
    void ensure(int index) {
        if (index >= capacity) {
            while (index >= v.getValueCapacity()) {
                v.reAlloc();
            }
            capacity = v.getValueCapacity();
        }
    }

    /** Forgets the capacity: called when a new batch starts. */
    void reset() {
        capacity = -1;
    }
}
