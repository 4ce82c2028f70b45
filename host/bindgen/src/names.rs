//! How a WIT name is spelled in Rust, and in Python.

use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};

/// Rust's reserved words that a WIT name could be.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "yield", "box", "gen", "try",
];

/// A type's or a case's name: `gc-plan` → `GcPlan`.
pub fn type_name(wit: &str) -> String {
    wit.to_upper_camel_case()
}

/// A field's, a parameter's or a function's name: `render-ref` → `render_ref`, a
/// keyword raw (`type` → `r#type`).
pub fn value_name(wit: &str) -> String {
    let snake = wit.to_snake_case();
    if KEYWORDS.contains(&snake.as_str()) {
        format!("r#{snake}")
    } else {
        snake
    }
}

/// The name a field or case has in the component model when its Rust name spells it
/// otherwise, for the derives' `#[component(name = …)]`.
pub fn renamed(wit: &str, rust: &str) -> Option<String> {
    (rust.trim_start_matches("r#") != wit).then(|| wit.to_string())
}

/// Python's reserved words that a WIT name could be.
const PYTHON_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// A field's, a parameter's or a function's name in Python (PEP 8): `render-ref` →
/// `render_ref`, a keyword with an underscore after it (`from` → `from_`).
pub fn python_name(wit: &str) -> String {
    let snake = wit.to_snake_case();
    if PYTHON_KEYWORDS.contains(&snake.as_str()) {
        format!("{snake}_")
    } else {
        snake
    }
}

/// An enum case's member name in Python: `not-folder` → `NOT_FOLDER`.
pub fn python_constant(wit: &str) -> String {
    wit.to_shouty_snake_case()
}
