/// A unit suffix and how many milliseconds it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
}

impl Unit {
    pub fn millis(self) -> u64 {
        match self {
            Unit::Millisecond => 1,
            Unit::Second => 1_000,
            Unit::Minute => 60_000,
            Unit::Hour => 3_600_000,
            Unit::Day => 86_400_000,
        }
    }
}

const SUFFIXES: &[(&str, Unit)] = &[
    ("d", Unit::Day),
    ("h", Unit::Hour),
    ("m", Unit::Minute),
    ("ms", Unit::Millisecond),
    ("s", Unit::Second),
];

/// Split the unit suffix off the front of `text`: ("ms5s", ..) -> (Millisecond, "5s").
pub fn take_unit(text: &str) -> Option<(Unit, &str)> {
    SUFFIXES
        .iter()
        .find(|(suffix, _)| text.starts_with(suffix))
        .map(|(suffix, unit)| (*unit, &text[suffix.len()..]))
}
