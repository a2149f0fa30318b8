package demo.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class WrapTest {
    @Test
    void wordsAreKeptTogetherUpToTheWidth() {
        assertEquals(List.of("the quick", "brown fox"), Wrap.wrap("the quick brown fox", 10));
    }

    @Test
    void aWordLongerThanTheWidthStandsAlone() {
        assertEquals(List.of("a", "wonderful", "b"), Wrap.wrap("a wonderful b", 4));
    }

    @Test
    void blankTextHasNoLines() {
        assertEquals(List.of(), Wrap.wrap("   ", 10));
    }

    @Test
    void aWidthBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Wrap.wrap("x", 0));
    }
}
