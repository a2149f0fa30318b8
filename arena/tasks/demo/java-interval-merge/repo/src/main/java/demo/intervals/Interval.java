package demo.intervals;

/** A closed range of integers, start <= end. */
public record Interval(int start, int end) {
    public Interval {
        if (start > end) {
            throw new IllegalArgumentException("start " + start + " is after end " + end);
        }
    }

    public int length() {
        return end - start + 1;
    }

    public boolean contains(int point) {
        return start <= point && point <= end;
    }
}
