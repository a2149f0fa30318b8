package demo.text;

import java.util.ArrayList;
import java.util.List;

/** Greedy word wrapping: as many words on a line as fit in the width. */
public final class Wrap {
    private Wrap() {
    }

    /** The text's words on lines of at most `width` characters (a longer word alone). */
    public static List<String> wrap(String text, int width) {
        if (width < 1) {
            throw new IllegalArgumentException("width must be positive, got " + width);
        }
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : words(text)) {
            if (line.length() > 0 && line.length() + 1 + word.length() >= width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            if (line.length() > 0) {
                line.append(' ');
            }
            line.append(word);
        }
        if (line.length() > 0) {
            lines.add(line.toString());
        }
        return lines;
    }

    /** The wrapped text as one string, its lines joined by newlines. */
    public static String fill(String text, int width) {
        return String.join("\n", wrap(text, width));
    }

    /** The words of the text, in order. */
    private static String[] words(String text) {
        return text.trim().split(" ");
    }
}
