//! Paged lists from a server (`tools/list`, `resources/list`, `prompts/list`), bounded: a
//! server that answers with a next cursor forever is stopped with a clear error instead of
//! filling memory.

use std::future::Future;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::ServiceError;

/// Pages read of one list at most.
pub(crate) const MAX_PAGES: usize = 100;
/// Items kept of one list at most.
pub(crate) const MAX_ITEMS: usize = 5_000;

/// Every page of a list, from `page(params)` which answers `(items, next_cursor)`.
pub(crate) async fn all_pages<T, F, Fut>(what: &str, mut page: F) -> Result<Vec<T>, ListError>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for pages in 1..=MAX_PAGES {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let (mut got, next) = page(params).await.map_err(|e| ListError::Failed {
            what: what.to_owned(),
            why: e.to_string(),
        })?;
        items.append(&mut got);
        if items.len() > MAX_ITEMS {
            return Err(ListError::TooManyItems {
                what: what.to_owned(),
                pages,
            });
        }
        match next {
            None => return Ok(items),
            Some(n) if n.is_empty() => return Ok(items),
            Some(n) if cursor.as_deref() == Some(n.as_str()) => {
                return Err(ListError::SameCursor {
                    what: what.to_owned(),
                    pages,
                });
            }
            Some(n) => cursor = Some(n),
        }
    }
    Err(ListError::TooManyPages {
        what: what.to_owned(),
        items: items.len(),
    })
}

/// Why a paged list could not be read; `what` is the method (`tools/list`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ListError {
    #[error("{what} failed: {why}")]
    Failed { what: String, why: String },
    #[error("{what}: the server listed more than {MAX_ITEMS} items (in {pages} pages); stopped")]
    TooManyItems { what: String, pages: usize },
    #[error("{what}: the server sent the same next cursor twice; stopped after {pages} pages")]
    SameCursor { what: String, pages: usize },
    #[error("{what}: the server kept paging past {MAX_PAGES} pages ({items} items); stopped")]
    TooManyPages { what: String, items: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn paging_ends_at_the_last_page_or_at_a_bound() {
        let mut calls = 0;
        let three = all_pages("tools/list", |p| {
            calls += 1;
            let n: usize = p
                .and_then(|p| p.cursor)
                .map_or(0, |c| c.parse().unwrap_or(0));
            async move {
                let next = (n < 2).then(|| (n + 1).to_string());
                Ok((vec![n], next))
            }
        })
        .await;
        assert_eq!(three, Ok(vec![0, 1, 2]));
        assert_eq!(calls, 3);
        let mut calls = 0;
        let endless = all_pages("tools/list", |p| {
            calls += 1;
            let n: usize = p
                .and_then(|p| p.cursor)
                .map_or(0, |c| c.parse().unwrap_or(0));
            async move { Ok((vec![n], Some((n + 1).to_string()))) }
        })
        .await;
        let e = endless.unwrap_err().to_string();
        assert!(e.contains("past 100 pages"), "{e}");
        assert_eq!(calls, MAX_PAGES);
        let same = all_pages("tools/list", |_| async {
            Ok((vec![1], Some("again".to_owned())))
        })
        .await
        .unwrap_err()
        .to_string();
        assert!(same.contains("same next cursor"), "{same}");
        let big = all_pages("tools/list", |_| async {
            Ok((vec![0u8; MAX_ITEMS + 1], None))
        })
        .await
        .unwrap_err()
        .to_string();
        assert!(big.contains("more than 5000 items"), "{big}");
    }
}
