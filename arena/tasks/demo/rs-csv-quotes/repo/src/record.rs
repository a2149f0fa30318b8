use crate::error::CsvError;

/// The fields of one CSV line.
pub type Record = Vec<String>;

/// Split one line into fields, honouring double-quoted fields.
pub fn split_record(line: &str, separator: char) -> Result<Record, CsvError> {
    let mut fields = Vec::new();
    let mut chars = line.char_indices().peekable();
    let mut field = String::new();
    let mut at_field_start = true;
    while let Some((column, c)) = chars.next() {
        if at_field_start && c == '"' {
            read_quoted(&mut chars, &mut field, column)?;
            match chars.peek() {
                None => break,
                Some(&(_, next)) if next == separator => {}
                Some(&(col, _)) => return Err(CsvError::TextAfterQuote { column: col }),
            }
            continue;
        }
        if c == separator {
            fields.push(std::mem::take(&mut field));
            at_field_start = true;
        } else {
            field.push(c);
            at_field_start = false;
        }
    }
    if !field.is_empty() {
        fields.push(field);
    }
    Ok(fields)
}

/// Read a quoted field up to its closing quote; the opening quote is already consumed.
fn read_quoted(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    field: &mut String,
    start: usize,
) -> Result<(), CsvError> {
    while let Some((_, c)) = chars.next() {
        if c == '"' {
            return Ok(());
        }
        field.push(c);
    }
    Err(CsvError::UnterminatedQuote { column: start })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_fields() {
        assert_eq!(split_record("a,b,c", ',').unwrap(), vec!["a", "b", "c"]);
    }

    #[test]
    fn quoted_separator() {
        assert_eq!(split_record("\"a,b\",c", ',').unwrap(), vec!["a,b", "c"]);
    }
}
