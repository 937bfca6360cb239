//! What servers say besides results: progress and log lines of a running call, and notices
//! for the user (tools added or changed, a question nobody could show).

/// A line for the pane of a running call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolNote {
    /// `notifications/progress` for the call's request.
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// `notifications/message` from the call's server while the call runs.
    Log { level: String, text: String },
}

impl ToolNote {
    /// One line, for a pane or stderr (the server's text still needs sanitizing for a terminal).
    pub fn line(&self) -> String {
        match self {
            ToolNote::Progress {
                progress,
                total,
                message,
            } => {
                let count = match total {
                    Some(t) if *t > 0.0 => {
                        format!(
                            "{}/{} ({:.0}%)",
                            num(*progress),
                            num(*t),
                            progress / t * 100.0
                        )
                    }
                    _ => num(*progress),
                };
                match message {
                    Some(m) => format!("progress {count}: {m}"),
                    None => format!("progress {count}"),
                }
            }
            ToolNote::Log { level, text } => format!("[{level}] {text}"),
        }
    }
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

/// Something a server did that the user should hear about outside a call.
#[derive(Debug, Clone, PartialEq)]
pub struct HubNotice {
    pub server: String,
    pub text: String,
    pub error: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_and_log_lines() {
        let p = ToolNote::Progress {
            progress: 3.0,
            total: Some(10.0),
            message: Some("step 3".into()),
        };
        assert_eq!(p.line(), "progress 3/10 (30%): step 3");
        let p = ToolNote::Progress {
            progress: 0.5,
            total: None,
            message: None,
        };
        assert_eq!(p.line(), "progress 0.50");
        let l = ToolNote::Log {
            level: "info".into(),
            text: "hi".into(),
        };
        assert_eq!(l.line(), "[info] hi");
    }
}
