use tinycsv::{split_record, CsvError};

#[test]
fn unterminated_quote_is_reported() {
    assert_eq!(
        split_record("a,\"open", ','),
        Err(CsvError::UnterminatedQuote { column: 2 })
    );
}

#[test]
fn text_after_quote_is_reported() {
    assert_eq!(
        split_record("\"a\"b,c", ','),
        Err(CsvError::TextAfterQuote { column: 3 })
    );
}

#[test]
fn tab_separator() {
    assert_eq!(split_record("x\ty", '\t').unwrap(), vec!["x", "y"]);
}
