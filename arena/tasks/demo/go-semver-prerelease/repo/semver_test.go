package semver

import "testing"

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{"1.2.3", "0.0.1-alpha.1", "2.0.0+build.5", "1.0.0-rc.1+sha.abc"} {
		if got := MustParse(s).String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, s := range []string{"1.2", "a.b.c", "1.2.-3"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

func TestCompareCore(t *testing.T) {
	if Compare(MustParse("1.2.3"), MustParse("1.10.0")) != -1 {
		t.Error("1.2.3 should be older than 1.10.0")
	}
	if Compare(MustParse("2.0.0+a"), MustParse("2.0.0+b")) != 0 {
		t.Error("build metadata must not count")
	}
}
