package io.flinkgo.shim.arrow;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVectorHelper;

/**
 * Appends the values of one batch to a top-level variable-width vector (STRING, BYTES, the
 * {@code _key} column) at indexes 0, 1, 2, ... and keeps the end of its data itself.
 *
 * <p>Design note: {@code setSafe} reads the previous value's end offset back out of the offset
 * buffer, bounds-checked, and checks every capacity for every value; for 200-byte rows that was
 * about a fifth of the task thread. Here the end is a field, capacity is checked against two
 * cached limits, and the vector is told where it ends ({@link #finish}) before {@code
 * setValueCount}, which would otherwise fill the offsets it thinks are holes.
 */
final class VarWidthAppender {
    private final BaseVariableWidthVector v;
    private int end; // bytes of data written in this batch
    private int next; // the row after the last one appended
    // The vector's capacities as last seen (-1: ask it); they only change when this class
    // reallocates, and a new batch asks again.
    private int valueCapacity = -1;
    private long dataCapacity = -1;

    VarWidthAppender(BaseVariableWidthVector v) {
        this.v = v;
    }

    /**
     * Appends {@code b[off, off + len)} at {@code index}: the batch's next row, or the one again
     * after a row that failed half-way (its start is then read back).
     */
    void append(int index, byte[] b, int off, int len) {
        at(index);
        ensure(index, len);
        v.getDataBuffer().setBytes(end, b, off, len);
        end += len;
        v.getOffsetBuffer().setInt((long) (index + 1) * BaseVariableWidthVector.OFFSET_WIDTH, end);
        BitVectorHelper.setBit(v.getValidityBuffer(), index);
        next = index + 1;
    }

    /** Appends a null at {@code index}, as {@link #append} does a value. */
    void appendNull(int index) {
        at(index);
        ensure(index, 0);
        v.getOffsetBuffer().setInt((long) (index + 1) * BaseVariableWidthVector.OFFSET_WIDTH, end);
        BitVectorHelper.unsetBit(v.getValidityBuffer(), index); // a failed row may have set it
        next = index + 1;
    }

    /** Positions the data end at row {@code index}'s start, unless it follows the last row. */
    private void at(int index) {
        if (index != next) {
            end = index == 0 ? 0 : v.getOffsetBuffer().getInt((long) index * BaseVariableWidthVector.OFFSET_WIDTH);
        }
    }

    private void ensure(int index, int len) {
        if (index >= valueCapacity) {
            while (index >= v.getValueCapacity()) {
                v.reallocValidityAndOffsetBuffers();
            }
            valueCapacity = v.getValueCapacity();
        }
        if ((long) end + len > dataCapacity) {
            while (v.getDataBuffer().capacity() < (long) end + len) {
                v.reallocDataBuffer();
            }
            dataCapacity = v.getDataBuffer().capacity();
        }
    }

    /** Before {@code setValueCount(rows)}: the vector's last set index is {@code rows - 1}. */
    void finish(int rows) {
        v.setLastSet(rows - 1);
    }

    /** After the vector's {@code reset}: a new batch starts at data offset 0. */
    void reset() {
        end = 0;
        next = 0;
        valueCapacity = -1;
        dataCapacity = -1;
    }
}
