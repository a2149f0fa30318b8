package demo.intervals;

import java.util.ArrayList;
import java.util.List;

/** Operations on lists of closed intervals. */
public final class Intervals {
    private Intervals() {
    }

    /** The smallest list of intervals covering exactly the points the given ones cover. */
    public static List<Interval> merge(List<Interval> intervals) {
        List<Interval> sorted = new ArrayList<>(intervals);
        List<Interval> merged = new ArrayList<>();
        for (Interval next : sorted) {
            if (!merged.isEmpty()) {
                Interval last = merged.get(merged.size() - 1);
                if (joins(last, next)) {
                    merged.set(merged.size() - 1,
                        new Interval(last.start(), Math.max(last.end(), next.end())));
                    continue;
                }
            }
            merged.add(next);
        }
        return merged;
    }

    /** How many points the intervals cover together. */
    public static int covered(List<Interval> intervals) {
        int total = 0;
        for (Interval interval : merge(intervals)) {
            total += interval.length();
        }
        return total;
    }

    /** Whether `next`, which starts no earlier than `last`, shares a point with it. */
    private static boolean joins(Interval last, Interval next) {
        return next.start() < last.end();
    }
}
