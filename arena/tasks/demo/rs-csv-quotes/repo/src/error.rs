use std::fmt;

/// What went wrong while splitting a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CsvError {
    /// A quoted field was still open at the end of the line.
    UnterminatedQuote { column: usize },
    /// A closing quote was followed by something other than a separator.
    TextAfterQuote { column: usize },
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CsvError::UnterminatedQuote { column } => {
                write!(f, "unterminated quoted field starting at column {}", column)
            }
            CsvError::TextAfterQuote { column } => {
                write!(f, "text after closing quote at column {}", column)
            }
        }
    }
}

impl std::error::Error for CsvError {}
