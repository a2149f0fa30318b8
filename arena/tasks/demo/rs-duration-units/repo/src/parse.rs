use std::fmt;
use std::time::Duration;

use crate::units::take_unit;

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    Empty,
    MissingNumber(String),
    UnknownUnit(String),
    Overflow,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty duration"),
            ParseError::MissingNumber(rest) => write!(f, "expected a number at {:?}", rest),
            ParseError::UnknownUnit(rest) => write!(f, "unknown unit at {:?}", rest),
            ParseError::Overflow => write!(f, "duration too large"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parse "1h30m", "250ms", "2d 4h" into a Duration.
pub fn parse_duration(text: &str) -> Result<Duration, ParseError> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(ParseError::Empty);
    }
    let mut total_ms: u64 = 0;
    while !rest.is_empty() {
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(ParseError::MissingNumber(rest.to_string()));
        }
        let number: u64 = rest[..digits].parse().map_err(|_| ParseError::Overflow)?;
        let (unit, after) =
            take_unit(&rest[digits..]).ok_or_else(|| ParseError::UnknownUnit(rest[digits..].to_string()))?;
        total_ms += number * unit.millis();
        rest = after.trim_start();
    }
    Ok(Duration::from_millis(total_ms))
}
