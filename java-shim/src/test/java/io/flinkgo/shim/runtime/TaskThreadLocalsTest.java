package io.flinkgo.shim.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicReference;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.types.StringValue;
import org.junit.jupiter.api.Test;

class TaskThreadLocalsTest {

    @Test
    void claimOnAFreshThreadReadsTheOneCharStringAndLeavesStringReadingIntact() throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                String claimed = TaskThreadLocals.claimStringBuffer();
                // A string longer than the claimed one must still round-trip through the same buffer.
                String text = "x".repeat(5000) + "é€";
                DataOutputSerializer out = new DataOutputSerializer(16);
                StringValue.writeString(text, out);
                String back = StringValue.readString(new DataInputDeserializer(out.getCopyOfBuffer()));
                result.set(claimed + "|" + back.equals(text));
            } catch (Throwable e) {
                result.set(e);
            }
        }, "fresh-task-thread");
        t.start();
        t.join();
        assertEquals("a|true", String.valueOf(result.get()));
    }
}
