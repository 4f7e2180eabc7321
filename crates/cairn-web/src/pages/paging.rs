//! Cursor paging of the long lists (runs, workflows, work items): a page holds [`PAGE_SIZE`] rows, newest first,
//! and the link to the next one carries an opaque cursor naming the last row shown (its sort time and id), so a
//! row added meanwhile neither repeats nor hides one.

/// Rows on one page.
pub(crate) const PAGE_SIZE: usize = 25;

/// The cursor after the row sorted at `at` (epoch ms) with id `id`.
pub(crate) fn cursor(at: i64, id: &str) -> String {
    format!("{at}-{id}")
}

/// The `(at, id)` a [`cursor`] names; `None` for "" or text that is not one (the list starts at its newest).
pub(crate) fn after(cursor: &str) -> Option<(i64, String)> {
    let (at, id) = cursor.split_once('-')?;
    Some((at.parse().ok()?, id.to_owned()))
}

/// `rows` (fetched [`PAGE_SIZE`] + 1 at most) cut to a page, with the cursor of the next page when there is one.
pub(crate) fn page<T>(mut rows: Vec<T>, key: impl Fn(&T) -> (i64, String)) -> (Vec<T>, String) {
    if rows.len() <= PAGE_SIZE {
        return (rows, String::new());
    }
    rows.truncate(PAGE_SIZE);
    let next = rows.last().map(|last| {
        let (at, id) = key(last);
        cursor(at, &id)
    });
    (rows, next.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_names_its_row_and_nonsense_names_none() {
        assert_eq!(after(&cursor(1_700_000_000_123, "abc-1")), Some((1_700_000_000_123, "abc-1".to_owned())));
        assert_eq!(after(""), None);
        assert_eq!(after("soon-abc"), None);
    }

    #[test]
    fn a_page_is_cut_at_its_size_and_knows_whether_more_follow() {
        let rows: Vec<i64> = (0..=PAGE_SIZE as i64).rev().collect();
        let (shown, next) = page(rows.clone(), |r| (*r, format!("r{r}")));
        assert_eq!((shown.len(), next.as_str()), (PAGE_SIZE, "1-r1"));
        let (shown, next) = page(rows[1..].to_vec(), |r| (*r, format!("r{r}")));
        assert_eq!((shown.len(), next.as_str()), (PAGE_SIZE, ""));
    }
}
