package io.flinkgo.shim.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.flinkgo.shim.wire.ErrorCode;
import io.flinkgo.shim.wire.ProtocolException;

class SentRowsTest {
    private static List<String> emit(SentRows s, long first, long count) throws Exception {
        List<String> out = new ArrayList<>();
        s.emit(first, count, (row, hasTs, ts) -> out.add(row + (hasTs ? "@" + ts : "")));
        return out;
    }

    @Test
    void keepsTheRowsFromTheHorizonOnAndGrows() throws Exception {
        SentRows s = new SentRows(1); // 16 slots: the rows below make it grow twice
        for (int i = 0; i < 50; i++) {
            s.add("r" + i, i % 2 == 0, 1000 + i);
        }
        assertEquals(50, s.kept());
        assertEquals(List.of("r3", "r4@1004", "r5"), emit(s, 3, 3));
        s.advance(40);
        assertEquals(10, s.kept());
        assertEquals(List.of("r40@1040", "r41", "r49"), List.of(emit(s, 40, 2).get(0), emit(s, 41, 1).get(0), emit(s, 49, 1).get(0)));
        for (int i = 50; i < 100; i++) { // wraps around the ring
            s.add("r" + i, false, 0);
        }
        assertEquals(List.of("r98", "r99"), emit(s, 98, 2));
        assertEquals(60, emit(s, 40, 60).size());
    }

    @Test
    void refusesRowsNotKept() throws Exception {
        SentRows s = new SentRows(16);
        for (int i = 0; i < 10; i++) {
            s.add("r" + i, false, 0);
        }
        s.advance(5);
        ProtocolException before = assertThrows(ProtocolException.class, () -> emit(s, 4, 2));
        assertEquals(ErrorCode.MALFORMED_FRAME, before.code());
        assertTrue(before.getMessage().contains("keeps rows 5 to 9"), before.getMessage());
        ProtocolException after = assertThrows(ProtocolException.class, () -> emit(s, 8, 3));
        assertTrue(after.getMessage().contains("names input rows 8 to 10"), after.getMessage());
        ProtocolException back = assertThrows(ProtocolException.class, () -> s.advance(4));
        assertTrue(back.getMessage().contains("never decreases"), back.getMessage());
    }

    @Test
    void aHorizonAheadOfTheRowsSentDropsThemAsTheyCome() throws Exception {
        SentRows s = new SentRows(16);
        s.add("r0", false, 0);
        s.advance(3); // Go granted more than was sent
        assertEquals(0, s.kept());
        s.add("r1", false, 0);
        s.add("r2", false, 0);
        s.add("r3", false, 0);
        assertEquals(1, s.kept());
        assertEquals(List.of("r3"), emit(s, 3, 1));
        assertThrows(ProtocolException.class, () -> emit(s, 2, 1));
    }

    @Test
    void droppedRowsAreNotReferencedAnyMore() throws Exception {
        SentRows s = new SentRows(16);
        Object[] holder = new Object[1];
        s.add(new Object(), false, 0);
        s.advance(1);
        s.add("r1", false, 0);
        s.emit(1, 1, (row, hasTs, ts) -> holder[0] = row);
        assertEquals("r1", holder[0]);
        // The slot of row 0 was cleared when the horizon passed it: 16 more rows reuse the ring
        // without growing, and row 0 is gone.
        assertThrows(ProtocolException.class, () -> emit(s, 0, 1));
    }
}
