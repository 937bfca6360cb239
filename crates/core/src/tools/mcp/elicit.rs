//! A server's question to the user (`elicitation/create`): the form it asks for, read from its
//! schema, and the answer that goes back. The question waits for whoever shows it (the TUI's
//! dialog); nobody answers on the user's behalf except with "cancel", and then says so.

use serde_json::{Map, Value};
use tokio::sync::oneshot;

/// What the user answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitReply {
    /// The values of the form, checked against its fields ([`ElicitAsk::check`]).
    Accept(Map<String, Value>),
    /// The user said no to this question; the operation may go on without it.
    Decline,
    /// The user (or a client that cannot ask) stopped the whole operation.
    Cancel,
}

/// The kind of value a field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text {
        /// `email`, `uri`, `date`, `date-time`, as the schema says.
        format: Option<String>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// One of `values`, each shown with its label.
    Choice {
        values: Vec<String>,
        labels: Vec<String>,
    },
    /// Any number of `values`.
    Choices {
        values: Vec<String>,
        labels: Vec<String>,
    },
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    pub default: Option<Value>,
}

/// A question from server `server`, waiting for [`ElicitAsk::answer`]. Dropping it unanswered
/// answers "cancel".
#[derive(Debug)]
pub struct ElicitAsk {
    pub server: String,
    /// The server's words: show them sanitized.
    pub message: String,
    pub fields: Vec<Field>,
    reply: Option<oneshot::Sender<ElicitReply>>,
}

impl ElicitAsk {
    /// A question and the receiver of its answer (the hub builds them from `elicitation/create`;
    /// front ends build them in their tests).
    pub fn new(
        server: String,
        message: String,
        fields: Vec<Field>,
    ) -> (ElicitAsk, oneshot::Receiver<ElicitReply>) {
        let (tx, rx) = oneshot::channel();
        let ask = ElicitAsk {
            server,
            message,
            fields,
            reply: Some(tx),
        };
        (ask, rx)
    }

    /// Answer the server. An `Accept` whose values do not fit the form is refused here (the
    /// dialog checks first with [`ElicitAsk::check`]).
    pub fn answer(mut self, reply: ElicitReply) -> Result<(), Vec<String>> {
        if let ElicitReply::Accept(values) = &reply {
            self.check(values)?;
        }
        if let Some(tx) = self.reply.take() {
            // The server may have given up meanwhile: nothing waits for the answer then.
            let _ = tx.send(reply);
        }
        Ok(())
    }

    /// Whether the server still waits (it has not cancelled nor closed).
    pub fn is_waiting(&self) -> bool {
        self.reply.as_ref().is_some_and(|tx| !tx.is_closed())
    }

    /// The problems with `values` as an answer, one line each naming the field.
    pub fn check(&self, values: &Map<String, Value>) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        for f in &self.fields {
            match values.get(&f.name) {
                None | Some(Value::Null) if f.required => {
                    problems.push(format!("{}: required", f.label()));
                }
                None | Some(Value::Null) => {}
                Some(v) => {
                    if let Err(e) = f.check(v) {
                        problems.push(format!("{}: {e}", f.label()));
                    }
                }
            }
        }
        for name in values.keys() {
            if !self.fields.iter().any(|f| &f.name == name) {
                problems.push(format!("{name}: not a field of this form"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// One line for a log or stderr: who asked what, with the fields' names.
    pub fn summary(&self) -> String {
        // Field names are the server's too: one line each, so they cannot add lines.
        let names: Vec<String> = self
            .fields
            .iter()
            .map(|f| kimi_protocol::sanitize::one_line(&f.name, 64))
            .collect();
        format!(
            "MCP server `{}` asked: {:?} (fields: {})",
            self.server,
            kimi_protocol::sanitize::one_line(&self.message, 300),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )
    }
}

impl Drop for ElicitAsk {
    fn drop(&mut self) {
        if let Some(tx) = self.reply.take() {
            let _ = tx.send(ElicitReply::Cancel);
        }
    }
}

impl Field {
    /// The title, or the name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// The value typed as `text` for this field: a number parsed, a boolean from
    /// yes/no/true/false, a choice by value or label, choices comma-separated.
    pub fn parse(&self, text: &str) -> Result<Value, FieldError> {
        let t = text.trim();
        let v = match &self.kind {
            FieldKind::Text { .. } => Value::String(text.to_owned()),
            FieldKind::Number { integer: true, .. } => t
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| FieldError::NotWhole(t.to_owned()))?,
            FieldKind::Number { .. } => t
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| FieldError::NotNumber(t.to_owned()))?,
            FieldKind::Boolean => match t.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" | "on" => Value::Bool(true),
                "n" | "no" | "false" | "0" | "off" => Value::Bool(false),
                _ => return Err(FieldError::NotYesOrNo(t.to_owned())),
            },
            FieldKind::Choice { values, labels } => {
                Value::String(pick(values, labels, t).ok_or_else(|| one_of(values))?)
            }
            FieldKind::Choices { values, labels } => {
                let mut out = Vec::new();
                for part in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    out.push(Value::String(
                        pick(values, labels, part).ok_or_else(|| one_of(values))?,
                    ));
                }
                Value::Array(out)
            }
        };
        self.check(&v)?;
        Ok(v)
    }

    /// Whether `v` is a value of this field.
    pub fn check(&self, v: &Value) -> Result<(), FieldError> {
        match (&self.kind, v) {
            (
                FieldKind::Text {
                    format,
                    min_length,
                    max_length,
                },
                Value::String(s),
            ) => {
                let n = s.chars().count() as u64;
                if min_length.is_some_and(|m| n < m) {
                    return Err(FieldError::TooShort(min_length.unwrap_or(0)));
                }
                if max_length.is_some_and(|m| n > m) {
                    return Err(FieldError::TooLong(max_length.unwrap_or(0)));
                }
                match format.as_deref() {
                    Some("email") if !looks_like_email(s) => Err(FieldError::NotEmail),
                    Some("uri") if !s.contains(':') => Err(FieldError::NotUri),
                    _ => Ok(()),
                }
            }
            (
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                },
                Value::Number(n),
            ) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if *integer && !(n.is_i64() || n.is_u64()) {
                    return Err(FieldError::WholeNeeded);
                }
                if minimum.is_some_and(|m| f < m) {
                    return Err(FieldError::BelowMinimum(minimum.unwrap_or(0.0)));
                }
                if maximum.is_some_and(|m| f > m) {
                    return Err(FieldError::AboveMaximum(maximum.unwrap_or(0.0)));
                }
                Ok(())
            }
            (FieldKind::Boolean, Value::Bool(_)) => Ok(()),
            (FieldKind::Choice { values, .. }, Value::String(s)) if values.contains(s) => Ok(()),
            (FieldKind::Choices { values, .. }, Value::Array(items))
                if items
                    .iter()
                    .all(|i| i.as_str().is_some_and(|s| values.iter().any(|v| v == s))) =>
            {
                Ok(())
            }
            (FieldKind::Choice { values, .. } | FieldKind::Choices { values, .. }, _) => {
                Err(one_of(values))
            }
            _ => Err(FieldError::WrongType),
        }
    }
}

fn pick(values: &[String], labels: &[String], text: &str) -> Option<String> {
    values
        .iter()
        .position(|v| v == text)
        .or_else(|| labels.iter().position(|l| l.eq_ignore_ascii_case(text)))
        .and_then(|i| values.get(i).cloned())
}

fn one_of(values: &[String]) -> FieldError {
    FieldError::NotOneOf(values.join(", "))
}

/// Why a value does not fit a form field; shown after the field's label.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FieldError {
    #[error("{0:?} is not a whole number")]
    NotWhole(String),
    #[error("{0:?} is not a number")]
    NotNumber(String),
    #[error("{0:?} is not yes or no")]
    NotYesOrNo(String),
    /// The allowed values, comma-separated.
    #[error("one of {0}")]
    NotOneOf(String),
    #[error("at least {0} characters")]
    TooShort(u64),
    #[error("at most {0} characters")]
    TooLong(u64),
    #[error("not an email address")]
    NotEmail,
    #[error("not a URI")]
    NotUri,
    #[error("a whole number is needed")]
    WholeNeeded,
    #[error("at least {0}")]
    BelowMinimum(f64),
    #[error("at most {0}")]
    AboveMaximum(f64),
    #[error("wrong type of value")]
    WrongType,
}

fn looks_like_email(s: &str) -> bool {
    match s.split_once('@') {
        Some((user, host)) => {
            !user.is_empty() && host.contains('.') && !s.contains(char::is_whitespace)
        }
        None => false,
    }
}

/// The fields of an elicitation's `requestedSchema`, in `order` when the server's order is
/// known, else by name. A property of a kind this client does not know is a text field.
pub(crate) fn fields(schema: &Value, order: Option<&[String]>) -> Vec<Field> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = match order {
        Some(o) => o.iter().filter(|n| props.contains_key(*n)).collect(),
        None => props.keys().collect(),
    };
    for n in props.keys() {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let p = props.get(name)?;
            Some(Field {
                name: name.clone(),
                title: str_of(p, "title"),
                description: str_of(p, "description"),
                kind: kind_of(p),
                required: required.contains(&name.as_str()),
                default: p.get("default").cloned(),
            })
        })
        .collect()
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn kind_of(p: &Value) -> FieldKind {
    let num = |k: &str| p.get(k).and_then(Value::as_f64);
    let uint = |k: &str| p.get(k).and_then(Value::as_u64);
    if let Some((values, labels)) = choices(p) {
        return FieldKind::Choice { values, labels };
    }
    match p.get("type").and_then(Value::as_str) {
        Some("boolean") => FieldKind::Boolean,
        Some(t @ ("number" | "integer")) => FieldKind::Number {
            integer: t == "integer",
            minimum: num("minimum"),
            maximum: num("maximum"),
        },
        Some("array") => {
            let (values, labels) = p.get("items").and_then(choices).unwrap_or_default();
            FieldKind::Choices { values, labels }
        }
        _ => FieldKind::Text {
            format: str_of(p, "format"),
            min_length: uint("minLength"),
            max_length: uint("maxLength"),
        },
    }
}

/// `enum` (with `enumNames`) or `oneOf`/`anyOf` of `{const, title}`.
fn choices(p: &Value) -> Option<(Vec<String>, Vec<String>)> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
    };
    if let Some(values) = p.get("enum").and_then(strings) {
        let labels = p
            .get("enumNames")
            .and_then(strings)
            .filter(|l| l.len() == values.len())
            .unwrap_or_else(|| values.clone());
        return Some((values, labels));
    }
    let options = p.get("oneOf").or_else(|| p.get("anyOf"))?.as_array()?;
    let mut values = Vec::new();
    let mut labels = Vec::new();
    for o in options {
        let value = o.get("const").and_then(Value::as_str)?;
        values.push(value.to_owned());
        labels.push(str_of(o, "title").unwrap_or_else(|| value.to_owned()));
    }
    Some((values, labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 2},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "agree": {"type": "boolean", "default": false},
                "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                "mail": {"type": "string", "format": "email"}
            },
            "required": ["name", "agree"]
        })
    }

    #[test]
    fn fields_follow_the_schema_and_the_servers_order() {
        let order: Vec<String> = ["agree", "name"].iter().map(|s| s.to_string()).collect();
        let f = fields(&schema(), Some(&order));
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names[..2], ["agree", "name"]);
        assert_eq!(f.len(), 7);
        assert!(f[0].required && f[1].required && !f[2].required);
        assert_eq!(f[1].label(), "Name");
        let color = f.iter().find(|f| f.name == "color").expect("color");
        assert_eq!(
            color.kind,
            FieldKind::Choice {
                values: vec!["r".into(), "g".into()],
                labels: vec!["Red".into(), "Green".into()]
            }
        );
        let size = f.iter().find(|f| f.name == "size").expect("size");
        assert_eq!(size.parse("large"), Ok(json!("l")));
        assert!(size.parse("medium").is_err());
        let tags = f.iter().find(|f| f.name == "tags").expect("tags");
        assert_eq!(tags.parse("a, b"), Ok(json!(["a", "b"])));
    }

    #[test]
    fn values_are_parsed_and_checked() {
        let f = fields(&schema(), None);
        let by = |n: &str| f.iter().find(|f| f.name == n).expect("field");
        assert_eq!(by("age").parse("42"), Ok(json!(42)));
        assert!(
            by("age")
                .parse("-1")
                .unwrap_err()
                .to_string()
                .contains("at least 0")
        );
        assert!(by("age").parse("4.5").is_err());
        assert_eq!(by("agree").parse("Yes"), Ok(json!(true)));
        assert!(by("agree").parse("maybe").is_err());
        assert!(
            by("name")
                .parse("x")
                .unwrap_err()
                .to_string()
                .contains("at least 2")
        );
        assert!(by("mail").parse("no-at-sign").is_err());
        assert_eq!(by("mail").parse("a@b.c"), Ok(json!("a@b.c")));
    }

    #[test]
    fn an_answer_is_checked_and_dropping_a_question_cancels_it() {
        let (ask, mut rx) = ElicitAsk::new("s".into(), "Who?".into(), fields(&schema(), None));
        let mut values = Map::new();
        values.insert("name".into(), json!("Al"));
        let problems = ask.check(&values).unwrap_err();
        assert_eq!(problems, ["agree: required"]);
        values.insert("agree".into(), json!(true));
        values.insert("extra".into(), json!(1));
        assert_eq!(
            ask.check(&values).unwrap_err(),
            ["extra: not a field of this form"]
        );
        values.remove("extra");
        assert!(ask.is_waiting());
        ask.answer(ElicitReply::Accept(values.clone()))
            .expect("valid answer");
        assert_eq!(rx.try_recv(), Ok(ElicitReply::Accept(values)));
        // The server's field names cannot add lines to the summary.
        let mut sneaky = fields(&schema(), None);
        sneaky[0].name = "name\nkimi-tui: approved".into();
        let (ask, _rx) = ElicitAsk::new("s".into(), "Who?\nx".into(), sneaky);
        assert_eq!(ask.summary().lines().count(), 1, "{}", ask.summary());
        let (ask, mut rx) = ElicitAsk::new("s".into(), "Who?".into(), Vec::new());
        drop(ask);
        assert_eq!(rx.try_recv(), Ok(ElicitReply::Cancel));
    }
}
