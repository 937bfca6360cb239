//! The approval dialog's argument rows at one width: a cache of the widget, held beside the
//! model (as the transcript's rows are), never inside the dialog's state. Built once per
//! dialog, edit and width, so neither a key nor a frame wraps long arguments again.

use std::sync::atomic::{AtomicU64, Ordering};

use ratatui::text::Line;

use super::approval::argument_rows;
use crate::app::state::ApprovalDialog;

/// A number no other dialog or edit has: what the rows are keyed by, with the width.
pub(crate) fn next_rev() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The rows of the arguments of one dialog (its `args_rev`) at one width.
#[derive(Debug, Default)]
pub(crate) struct ArgRows {
    key: Option<(u64, u16)>,
    rows: Vec<Line<'static>>,
}

impl ArgRows {
    /// Lay out `d`'s arguments at `width` unless they already are.
    pub(crate) fn refresh(&mut self, d: &ApprovalDialog, width: u16) {
        let key = Some((d.args_rev, width));
        if self.key != key {
            self.rows = argument_rows(d, width);
            self.key = key;
        }
    }

    /// The rows of `d` at `width`, if laid out.
    pub(crate) fn get(&self, d: &ApprovalDialog, width: u16) -> Option<&[Line<'static>]> {
        (self.key == Some((d.args_rev, width))).then_some(self.rows.as_slice())
    }

    /// No dialog: nothing kept.
    pub(crate) fn clear(&mut self) {
        *self = ArgRows::default();
    }

    /// Rows held now (for tests that the rows go with the dialog).
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.rows.len()
    }
}
