package demo.intervals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class IntervalsTest {
    @Test
    void overlappingIntervalsMerge() {
        assertEquals(
            List.of(new Interval(1, 6)),
            Intervals.merge(List.of(new Interval(1, 4), new Interval(2, 6))));
    }

    @Test
    void separateIntervalsStaySeparate() {
        assertEquals(
            List.of(new Interval(1, 2), new Interval(5, 6)),
            Intervals.merge(List.of(new Interval(1, 2), new Interval(5, 6))));
    }

    @Test
    void anEmptyListMergesToNothing() {
        assertEquals(List.of(), Intervals.merge(List.of()));
    }

    @Test
    void startAfterEndIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Interval(3, 2));
    }
}
