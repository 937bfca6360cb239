//! `/usage`: per user turn, the tokens the server reported (prompt, cached with the hit rate,
//! completion, reasoning), the earlier reasoning re-sent in the prompts, and every request whose
//! prompt stopped extending the one before; then the totals. A figure the server did not
//! report is `-`, never 0.

use kimi_protocol::reasoning_resent::Measured;

use super::thinking_cost::{CacheBreak, RequestCost, percent, why};

/// A column summed over requests, some of which may not have reported it.
#[derive(Debug, Default, Clone, Copy)]
struct Sum {
    value: u64,
    reported: usize,
    of: usize,
}

impl Sum {
    fn add(&mut self, figure: Option<u64>) {
        self.of += 1;
        if let Some(v) = figure {
            self.value = self.value.saturating_add(v);
            self.reported += 1;
        }
    }

    /// `-` when nothing was reported, `N+?` when only some requests reported it.
    fn cell(&self) -> String {
        match self.reported {
            0 => "-".to_owned(),
            n if n < self.of => format!("{}+?", self.value),
            _ => self.value.to_string(),
        }
    }
}

/// The sums of one turn (or of all).
#[derive(Debug, Default, Clone, Copy)]
struct Row {
    requests: usize,
    prompt: Sum,
    /// The prompt tokens of the requests that reported a cache hit: the hit rate's base.
    prompt_of_cached: u64,
    cached: Sum,
    completion: Sum,
    reasoning: Sum,
    resent_bytes: Sum,
    resent_tokens: Sum,
    /// Some re-sent bytes were measured on this client's render (chat mode).
    client_render: bool,
}

impl Row {
    fn add(&mut self, c: &RequestCost) {
        self.requests += 1;
        let u = c.usage;
        self.prompt.add(u.map(|u| u.prompt_tokens));
        self.completion.add(u.map(|u| u.completion_tokens));
        let cached = u.and_then(|u| u.cached_tokens);
        self.cached.add(cached);
        if cached.is_some() {
            self.prompt_of_cached =
                (self.prompt_of_cached).saturating_add(u.map_or(0, |u| u.prompt_tokens));
        }
        self.reasoning.add(u.and_then(|u| u.reasoning_tokens));
        self.resent_bytes.add(c.resent.as_ref().map(|r| r.bytes));
        self.resent_tokens.add(c.resent_tokens);
        self.client_render |= c
            .resent
            .as_ref()
            .is_some_and(|r| r.measured == Measured::ClientRender && r.bytes > 0);
    }

    fn cells(&self, label: String) -> [String; 8] {
        let cached = match percent(self.cached.value, self.prompt_of_cached) {
            Some(p) if self.cached.reported > 0 => format!("{} ({p}%)", self.cached.cell()),
            _ => self.cached.cell(),
        };
        let mark = if self.client_render { "~" } else { "" };
        [
            label,
            self.requests.to_string(),
            self.prompt.cell(),
            cached,
            self.completion.cell(),
            self.reasoning.cell(),
            format!("{mark}{}", self.resent_bytes.cell()),
            self.resent_tokens.cell(),
        ]
    }
}

const HEADER: [&str; 8] = [
    "turn",
    "requests",
    "prompt",
    "cached",
    "completion",
    "reasoning",
    "re-sent bytes",
    "re-sent tokens",
];

/// The report of `costs`, one entry per request in order.
pub(crate) fn report(costs: &[(RequestCost, Option<CacheBreak>)]) -> String {
    if costs.is_empty() {
        return "No requests yet: /usage lists each turn's tokens once a request was sent."
            .to_owned();
    }
    let mut rows: Vec<(usize, Row, Vec<String>)> = Vec::new();
    let mut total = Row::default();
    for (i, (c, broke)) in costs.iter().enumerate() {
        if rows.last().is_none_or(|(turn, _, _)| *turn != c.turn) {
            rows.push((c.turn, Row::default(), Vec::new()));
        }
        let Some((_, row, warnings)) = rows.last_mut() else {
            continue;
        };
        row.add(c);
        total.add(c);
        if let Some(b) = broke {
            let why = why(b.dropped.as_deref());
            warnings.push(match b.at {
                Some((offset, old_len)) => format!(
                    "  ! request {} no longer extends request {i}'s prompt from byte {offset} of {old_len}: {why}; the prefix cache cannot hit past it",
                    i + 1
                ),
                None => format!(
                    "  ! request {}: its chat messages extend request {i}'s, but as this client renders them the prompt does not: {why}; the server's prefix cache likely misses from there",
                    i + 1
                ),
            });
        }
    }
    let mut table: Vec<[String; 8]> = vec![HEADER.map(str::to_owned)];
    let mut after: Vec<Vec<String>> = vec![Vec::new()];
    for (turn, row, warnings) in rows {
        table.push(row.cells(turn.to_string()));
        after.push(warnings);
    }
    table.push(total.cells("total".to_owned()));
    after.push(Vec::new());
    let widths: Vec<usize> = (0..8)
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out =
        String::from("What thinking costs, per user turn (tokens as the server reported them)\n");
    for (cells, warnings) in table.iter().zip(after) {
        let line: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (s, w))| {
                if c == 0 {
                    format!("{s:<w$}")
                } else {
                    format!("{s:>w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        for w in warnings {
            out.push_str(&w);
            out.push('\n');
        }
    }
    out.push_str(
        "-: not reported by the server; N+?: some requests of the turn did not report it.\n\
         re-sent: earlier reasoning in the prompt, in bytes of the prompt sent (raw mode) or, marked ~, \
         of this client's render of the chat messages (the server renders its own); \
         in tokens as the server counted them when it generated those answers.",
    );
    out
}
