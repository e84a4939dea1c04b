//! Input files in TOML (the simulator's data files, the daemon's configuration): errors
//! that name the file, the line and the field, located by the field's full dotted path,
//! and numbers in messages shown at a readable length.

use serde::Deserialize;
use std::fmt;

/// A problem with an input file, located as precisely as the input allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The key (or app name) the problem is about, when known.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(k) = &self.field {
            write!(f, ": field `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// One step of a path into a TOML document: a key of a table, or an element of an
/// array (of values or of tables).
#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Splits a dotted path such as `app[3].name` or `background.fixed[1]` (keys of this
/// schema hold no dots or brackets).
fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            out.push(Seg::Key(rest[..i].to_string()));
            rest = &rest[i..];
            while let Some(end) = rest.find(']') {
                if let Ok(n) = rest[1..end].parse() {
                    out.push(Seg::Index(n));
                }
                rest = &rest[end + 1..];
            }
        } else {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

/// A key or value of a parsed document: its path, the field name errors show for it
/// (the dotted keys, restarting inside an array of tables and ending at an array of
/// values), and where its key and its value are in the text.
struct Node {
    path: Vec<Seg>,
    field: String,
    key: Option<std::ops::Range<usize>>,
    value: Option<std::ops::Range<usize>>,
    table: bool,
}

fn walk(item: &toml_edit::Item, node: Node, out: &mut Vec<Node>) {
    let (path, field, in_values) = (node.path.clone(), node.field.clone(), item.is_array());
    out.push(node);
    if let Some(t) = item.as_table_like() {
        for (k, _) in t.iter() {
            if let Some((key, child)) = t.get_key_value(k) {
                let mut p = path.clone();
                p.push(Seg::Key(k.to_string()));
                let f = if field.is_empty() { k.to_string() } else { format!("{field}.{k}") };
                let table = child.is_table_like();
                walk(child, Node { path: p, field: f, key: key.span(), value: child.span(), table }, out);
            }
        }
        return;
    }
    for i in 0.. {
        let Some(child) = item.get(i) else { break };
        let mut p = path.clone();
        p.push(Seg::Index(i));
        // Inside an array of tables the field restarts (an app's `name`); an element
        // of an array of values is shown as the array.
        let f = if in_values { field.clone() } else { String::new() };
        walk(child, Node { path: p, field: f, key: None, value: child.span(), table: child.is_table_like() }, out);
    }
}

/// An input file's name and text; parsed once more (keeping spans) when a problem is to
/// be located by its key's full dotted path.
pub struct Input<'a> {
    file: &'a str,
    src: &'a str,
    nodes: std::cell::OnceCell<Vec<Node>>,
}

impl<'a> Input<'a> {
    pub fn new(file: &'a str, src: &'a str) -> Input<'a> {
        Input { file, src, nodes: std::cell::OnceCell::new() }
    }

    /// Every key and value of the document, parents before children.
    fn nodes(&self) -> &[Node] {
        self.nodes.get_or_init(|| {
            let mut nodes = Vec::new();
            if let Ok(doc) = toml_edit::ImDocument::parse(self.src) {
                let root = doc.as_item();
                walk(root, Node { path: Vec::new(), field: String::new(), key: None, value: root.span(), table: true }, &mut nodes);
            }
            nodes
        })
    }

    /// The 1-based line holding byte `at`.
    fn line_at(&self, at: usize) -> usize {
        self.src.as_bytes()[..at.min(self.src.len())].iter().filter(|&&b| b == b'\n').count() + 1
    }

    /// The line of `path`: its key's line, or its value's for an array element; the
    /// nearest enclosing table's header line when the key is absent; none for the
    /// top level.
    pub fn line_of(&self, path: &str) -> Option<usize> {
        let mut path = segments(path);
        while !path.is_empty() {
            if let Some(n) = self.nodes().iter().find(|n| n.path == path) {
                return n.key.clone().or(n.value.clone()).map(|r| self.line_at(r.start));
            }
            path.pop();
        }
        None
    }

    /// An error about the value at `path` (e.g. `memory.ram_mib`, `app[3].anon_mib`),
    /// shown as `field`.
    pub fn error_at(&self, path: &str, field: &str, message: impl Into<String>) -> ConfigError {
        ConfigError { file: self.file.to_string(), line: self.line_of(path), field: Some(field.to_string()), message: message.into() }
    }

    /// An error about the value at `path`, shown under the same name.
    pub fn error(&self, path: &str, message: impl Into<String>) -> ConfigError {
        let field: Vec<&str> = path.split('.').map(|p| p.split('[').next().unwrap_or(p)).collect();
        self.error_at(path, &field.join("."), message)
    }

    /// Locates an error of deserialization: a missing field in the table it belongs
    /// to (at the table's header line; no line at the top level), anything else at the
    /// deepest key or value holding the error's position.
    pub fn de_error(&self, e: &toml::de::Error) -> ConfigError {
        let message = shorten_numbers(e.message().trim());
        let at = |field: String, line: Option<usize>| ConfigError {
            file: self.file.to_string(),
            line,
            field: Some(field),
            message: message.clone(),
        };
        let Some(span) = e.span() else {
            return ConfigError { file: self.file.to_string(), line: None, field: None, message };
        };
        let missing = message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`'));
        if let Some(name) = missing {
            // serde reports a missing field on the table that lacks it.
            let table = self.nodes().iter().rfind(|n| n.table && (n.value == Some(span.clone()) || n.key == Some(span.clone())));
            return match table {
                Some(n) if n.path.is_empty() => at(name.to_string(), None),
                Some(n) => {
                    let field = if n.field.is_empty() { name.to_string() } else { format!("{}.{name}", n.field) };
                    at(field, Some(self.line_at(span.start)))
                }
                None => at(name.to_string(), Some(self.line_at(span.start))),
            };
        }
        let holds =
            |r: &Option<std::ops::Range<usize>>| r.as_ref().is_some_and(|r| r.start <= span.start && span.start < r.end.max(r.start + 1));
        let line = self.line_at(span.start);
        match self.nodes().iter().filter(|n| !n.path.is_empty() && (holds(&n.key) || holds(&n.value))).max_by_key(|n| n.path.len()) {
            Some(n) if !n.field.is_empty() => at(n.field.clone(), Some(line)),
            _ => {
                // No key holds the position (the text is not TOML): name the key the line
                // sets, if any.
                let text = self.src.lines().nth(line - 1).unwrap_or("");
                let field = text.split_once('=').map(|(k, _)| k.trim().to_string()).filter(|k| !k.is_empty() && !k.starts_with('['));
                ConfigError { file: self.file.to_string(), line: Some(line), field, message }
            }
        }
    }
}

/// Deserializes `input`, locating any error.
pub fn parse<T: for<'de> Deserialize<'de>>(input: &Input) -> Result<T, ConfigError> {
    toml::from_str(input.src).map_err(|e| input.de_error(&e))
}

/// A number as messages show it: as written for everyday magnitudes, in scientific
/// notation when it would take more than a dozen digits (`1e300`, not 301 of them).
pub fn num(v: f64) -> String {
    let a = v.abs();
    if v.is_finite() && a != 0.0 && !(1e-6..1e12).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Rewrites the numbers in backticks of a deserializer's message (serde prints a float
/// it rejects digit by digit) with [`num`].
fn shorten_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find('`') else { break };
        let quoted = &rest[..close];
        match quoted.parse::<f64>() {
            Ok(v) if quoted.len() > 16 => out.push_str(&num(v)),
            _ => out.push_str(quoted),
        }
        out.push('`');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        size: u32,
        #[serde(default, rename = "app")]
        apps: Vec<App>,
    }
    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct App {
        name: String,
    }

    #[test]
    fn numbers_are_shown_short_at_any_magnitude() {
        assert_eq!(num(144.0), "144");
        assert_eq!(num(-0.5), "-0.5");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1e300), "1e300");
        assert_eq!(num(-2.5e-9), "-2.5e-9");
        assert_eq!(num(f64::NAN), "NaN");
        assert_eq!(num(f64::INFINITY), "inf");
        let long = format!("invalid type: floating point `{:.1}`, expected u32", 1e30);
        assert_eq!(shorten_numbers(&long), "invalid type: floating point `1e30`, expected u32");
        assert_eq!(shorten_numbers("unknown field `polcy`, expected `policy`"), "unknown field `polcy`, expected `policy`");
        assert_eq!(shorten_numbers("odd ` quote"), "odd ` quote");
    }

    #[test]
    fn errors_are_located_by_path_and_by_the_deserializers_span() {
        let src = "size = 3\n\n[[app]]\nname = \"a\"\n[[app]]\nname = \"b\"\n";
        let input = Input::new("f.toml", src);
        assert_eq!(input.error("app[1].name", "taken").to_string(), "f.toml:6: field `app.name`: taken");
        assert_eq!(input.error_at("app[0].name", "name", "bad").line, Some(4));
        assert_eq!(input.error("size", "too small").to_string(), "f.toml:1: field `size`: too small");
        // Absent keys are placed at their table, or nowhere at the top level.
        assert_eq!(input.line_of("app[1].colour"), Some(5));
        assert_eq!(input.line_of("colour"), None);
        let e = parse::<Doc>(&Input::new("f.toml", "size = 1e30\n")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("size")));
        assert!(e.message.contains("`1e30`"), "{e}");
        let e = parse::<Doc>(&Input::new("f.toml", "size = 1\n[[app]]\nnam = \"x\"\n")).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }
}
