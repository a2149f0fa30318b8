//! humandur: parse human-written durations into `std::time::Duration`.

mod parse;
mod units;

pub use parse::{parse_duration, ParseError};
pub use units::Unit;
