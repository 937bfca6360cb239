//! The Python-exact JSON writer against CPython itself: `json.dumps(json.loads(x))` for
//! generated floats and integers of any width, one `python3` run per batch of values.

use std::io::Write;
use std::process::{Command, Stdio};

use kimi_protocol::json::{self, PYTHON_DEFAULT};
use proptest::prelude::*;

/// What CPython writes for each JSON literal of `lines`, one per line.
fn python_dumps(lines: &[String]) -> Vec<String> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import json, sys\nfor line in sys.stdin:\n    print(json.dumps(json.loads(line), ensure_ascii=False))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut input = lines.join("\n");
    input.push('\n');
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from another thread: a batch may not fit the pipe while python3 writes back.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("python3 output");
    writer.join().expect("writer").expect("written");
    assert!(out.status.success(), "python3 failed");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What the writer makes of each literal, read as `render` reads request files.
fn ours(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let (v, ints) = json::parse(l).expect("valid JSON");
            json::with_wide_ints(&ints, || json::to_string(&v, PYTHON_DEFAULT))
        })
        .collect()
}

/// A finite float as a JSON literal, in the forms writers use (shortest, exponent, fixed).
fn float_literal() -> impl Strategy<Value = String> {
    (any::<u64>(), 0..3u8)
        .prop_map(|(bits, form)| (f64::from_bits(bits), form))
        .prop_filter("finite", |(f, _)| f.is_finite())
        .prop_map(|(f, form)| match form {
            0 => format!("{f:?}"),
            1 => format!("{f:e}"),
            _ => format!("{f:.3e}"),
        })
}

/// An integer literal of 1 to 80 digits, either sign (`-0` included).
fn integer_literal() -> impl Strategy<Value = String> {
    (any::<bool>(), "[1-9][0-9]{0,79}|0").prop_map(
        |(neg, digits)| {
            if neg { format!("-{digits}") } else { digits }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn floats_are_written_as_python_writes_them(
        batch in proptest::collection::vec(float_literal(), 300),
    ) {
        let mut batch = batch;
        batch.extend(["-0.0", "0.0", "-0", "1e16", "1E+16", "1e-05", "5e-324"].map(String::from));
        prop_assert_eq!(ours(&batch), python_dumps(&batch));
    }

    #[test]
    fn integers_of_any_width_keep_every_digit(
        batch in proptest::collection::vec(integer_literal(), 300),
    ) {
        // Also inside containers, and beside a float that could be taken for a stand-in.
        let mut lines = batch.clone();
        lines.push(format!("[{}, 5e-324, -5e-324, 1e-323]", batch.join(", ")));
        lines.push(format!("{{\"n\": {}, \"f\": -0.0}}", batch[0]));
        prop_assert_eq!(ours(&lines), python_dumps(&lines));
    }
}
