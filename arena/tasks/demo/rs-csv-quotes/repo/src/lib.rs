//! tinycsv: split RFC 4180 CSV records into fields.

mod error;
mod record;

pub use error::CsvError;
pub use record::{split_record, Record};
