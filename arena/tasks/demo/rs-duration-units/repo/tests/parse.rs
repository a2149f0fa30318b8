use std::time::Duration;

use humandur::{parse_duration, ParseError};

#[test]
fn seconds_and_minutes() {
    assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
}

#[test]
fn whitespace_between_parts() {
    assert_eq!(parse_duration(" 2d 4h "), Ok(Duration::from_secs(2 * 86400 + 4 * 3600)));
}

#[test]
fn refusals() {
    assert_eq!(parse_duration(""), Err(ParseError::Empty));
    assert_eq!(parse_duration("h"), Err(ParseError::MissingNumber("h".into())));
    assert_eq!(parse_duration("5x"), Err(ParseError::UnknownUnit("x".into())));
}
