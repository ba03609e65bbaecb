//! Filters on a table's columns (feature `paimon`): comparisons, `IN`, `IS [NOT] NULL`,
//! `AND`, `OR`, written in a small SQL-like grammar ([`Filter::parse`]) or built directly.
//!
//! Planning applies a filter as the Paimon clients do: exactly on partition values (a data
//! file's partition either matches or not), and as "may match" on everything the metadata
//! only bounds: the manifest list's partition statistics, a file's value statistics
//! (min/max, null counts), and the bucket a bucket-key equality hashes to. A file is kept
//! unless the metadata proves it holds no matching row.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=` or `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A filter over named columns; values are text, typed through the table schema when the
/// query is prepared (dates `YYYY-MM-DD`, decimals `1.50`, binary as hex, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// `column op value`.
    Compare {
        /// Column name.
        column: String,
        /// Operator.
        op: CmpOp,
        /// Value as text.
        value: String,
    },
    /// `column IN (v1, v2, ...)`.
    In {
        /// Column name.
        column: String,
        /// Values as text.
        values: Vec<String>,
    },
    /// `column IS NULL`.
    IsNull(String),
    /// `column IS NOT NULL`.
    IsNotNull(String),
    /// Every filter holds.
    And(Vec<Filter>),
    /// Some filter holds.
    Or(Vec<Filter>),
}

/// Writes a value as the grammar reads it back: bare when it is a plain word or number,
/// else single-quoted with quotes doubled.
fn write_value(f: &mut fmt::Formatter<'_>, v: &str) -> fmt::Result {
    let bare = !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':' | b'+'))
        && !matches!(
            v.to_ascii_uppercase().as_str(),
            "AND" | "OR" | "IN" | "IS" | "NOT" | "NULL"
        );
    if bare {
        f.write_str(v)
    } else {
        f.write_str("'")?;
        for part in v.split('\'').enumerate() {
            if part.0 > 0 {
                f.write_str("''")?;
            }
            f.write_str(part.1)?;
        }
        f.write_str("'")
    }
}

fn write_column(f: &mut fmt::Formatter<'_>, c: &str) -> fmt::Result {
    let plain = c
        .bytes()
        .enumerate()
        .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()))
        && !c.is_empty();
    if plain {
        f.write_str(c)
    } else {
        write!(f, "\"{}\"", c.replace('"', "\"\""))
    }
}

impl fmt::Display for Filter {
    /// The filter in the grammar [`Filter::parse`] reads (parsing it gives the same filter).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, items: &[Filter], sep: &str| -> fmt::Result {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                if matches!(item, Filter::And(_) | Filter::Or(_)) {
                    write!(f, "({item})")?;
                } else {
                    write!(f, "{item}")?;
                }
            }
            Ok(())
        };
        match self {
            Filter::Compare { column, op, value } => {
                write_column(f, column)?;
                write!(f, " {} ", op.symbol())?;
                write_value(f, value)
            }
            Filter::In { column, values } => {
                write_column(f, column)?;
                f.write_str(" IN (")?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_value(f, v)?;
                }
                f.write_str(")")
            }
            Filter::IsNull(c) => {
                write_column(f, c)?;
                f.write_str(" IS NULL")
            }
            Filter::IsNotNull(c) => {
                write_column(f, c)?;
                f.write_str(" IS NOT NULL")
            }
            Filter::And(items) => list(f, items, " AND "),
            Filter::Or(items) => list(f, items, " OR "),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Ident(String),
    Op(CmpOp),
    Open,
    Close,
    Comma,
}

fn tokens(text: &str) -> Result<Vec<(usize, Tok)>, String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let start = i;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'(' => {
                out.push((start, Tok::Open));
                i += 1;
            }
            b')' => {
                out.push((start, Tok::Close));
                i += 1;
            }
            b',' => {
                out.push((start, Tok::Comma));
                i += 1;
            }
            b'\'' | b'"' => {
                let quote = c;
                let mut s = String::new();
                i += 1;
                loop {
                    let rest = text.get(i..).unwrap_or_default();
                    let Some(pos) = rest.find(char::from(quote)) else {
                        return Err(alloc::format!(
                            "unterminated {} at character {start}",
                            if quote == b'\'' {
                                "string"
                            } else {
                                "quoted column"
                            }
                        ));
                    };
                    s.push_str(rest.get(..pos).unwrap_or_default());
                    i += pos + 1;
                    if b.get(i) == Some(&quote) {
                        s.push(char::from(quote));
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push((
                    start,
                    if quote == b'\'' {
                        Tok::Quoted(s)
                    } else {
                        Tok::Ident(s)
                    },
                ));
            }
            b'=' => {
                out.push((start, Tok::Op(CmpOp::Eq)));
                i += 1;
            }
            b'!' if b.get(i + 1) == Some(&b'=') => {
                out.push((start, Tok::Op(CmpOp::Ne)));
                i += 2;
            }
            b'<' => {
                let (op, n) = match b.get(i + 1) {
                    Some(b'=') => (CmpOp::Le, 2),
                    Some(b'>') => (CmpOp::Ne, 2),
                    _ => (CmpOp::Lt, 1),
                };
                out.push((start, Tok::Op(op)));
                i += n;
            }
            b'>' => {
                let (op, n) = match b.get(i + 1) {
                    Some(b'=') => (CmpOp::Ge, 2),
                    _ => (CmpOp::Gt, 1),
                };
                out.push((start, Tok::Op(op)));
                i += n;
            }
            _ if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'+' | b':') => {
                while b.get(i).is_some_and(|&c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'+' | b':')
                }) {
                    i += 1;
                }
                out.push((
                    start,
                    Tok::Word(text.get(start..i).unwrap_or_default().into()),
                ));
            }
            _ => {
                let ch = text.get(i..).and_then(|r| r.chars().next()).unwrap_or('?');
                return Err(alloc::format!(
                    "unexpected {ch:?} at character {start} (quote values with '...')"
                ));
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    at: usize,
    len: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(_, t)| t)
    }
    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.len, |(p, _)| *p)
    }
    fn keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }
    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(alloc::format!(
            "expected {what} at character {}",
            self.pos()
        ))
    }
    fn or(&mut self) -> Result<Filter, String> {
        let mut items = alloc::vec![self.and()?];
        while self.keyword("OR") {
            self.at += 1;
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Filter::Or(items)
        })
    }
    fn and(&mut self) -> Result<Filter, String> {
        let mut items = alloc::vec![self.unary()?];
        while self.keyword("AND") {
            self.at += 1;
            items.push(self.unary()?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Filter::And(items)
        })
    }
    fn unary(&mut self) -> Result<Filter, String> {
        if self.peek() == Some(&Tok::Open) {
            self.at += 1;
            let inner = self.or()?;
            if self.peek() != Some(&Tok::Close) {
                return self.err("')'");
            }
            self.at += 1;
            return Ok(inner);
        }
        let column = match self.peek() {
            Some(Tok::Word(w))
                if !["AND", "OR", "IN", "IS", "NOT", "NULL"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k)) =>
            {
                w.clone()
            }
            Some(Tok::Ident(w)) => w.clone(),
            _ => return self.err("a column name"),
        };
        self.at += 1;
        if self.keyword("IS") {
            self.at += 1;
            let not = self.keyword("NOT");
            if not {
                self.at += 1;
            }
            if !self.keyword("NULL") {
                return self.err("NULL");
            }
            self.at += 1;
            return Ok(if not {
                Filter::IsNotNull(column)
            } else {
                Filter::IsNull(column)
            });
        }
        if self.keyword("IN") {
            self.at += 1;
            if self.peek() != Some(&Tok::Open) {
                return self.err("'(' after IN");
            }
            self.at += 1;
            let mut values = alloc::vec![self.value()?];
            while self.peek() == Some(&Tok::Comma) {
                self.at += 1;
                values.push(self.value()?);
            }
            if self.peek() != Some(&Tok::Close) {
                return self.err("',' or ')' in the IN list");
            }
            self.at += 1;
            return Ok(Filter::In { column, values });
        }
        let Some(Tok::Op(op)) = self.peek().cloned() else {
            return self.err("an operator (=, !=, <, <=, >, >=, IN, IS NULL)");
        };
        self.at += 1;
        let value = self.value()?;
        Ok(Filter::Compare { column, op, value })
    }
    fn value(&mut self) -> Result<String, String> {
        let v = match self.peek() {
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("NULL") => {
                return self.err("a value (use IS NULL to test for null)")
            }
            Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
            _ => return self.err("a value"),
        };
        self.at += 1;
        Ok(v)
    }
}

impl Filter {
    /// Parses the filter grammar: comparisons `col = v` (`!=`/`<>`, `<`, `<=`, `>`, `>=`),
    /// `col IN (v, ...)`, `col IS NULL`, `col IS NOT NULL`, joined by `AND` (binds tighter)
    /// and `OR`, with parentheses. Keywords are case-insensitive. Values are bare words and
    /// numbers (`42`, `-1.5`, `2024-02-29`) or single-quoted text with `''` for a quote
    /// (`'a, b'`, `'it''s'`, `'é'`); column names are bare or double-quoted. The error says
    /// what was expected and at which character.
    ///
    /// ```
    /// use lakecore::paimon::{CmpOp, Filter};
    /// let f = Filter::parse("dt >= 2024-01-02 AND (hr IN (3, 4) OR name = 'a, b') AND v IS NULL")?;
    /// let Filter::And(parts) = &f else { panic!() };
    /// assert_eq!(parts[0], Filter::Compare { column: "dt".into(), op: CmpOp::Ge, value: "2024-01-02".into() });
    /// assert_eq!(Filter::parse(&f.to_string())?, f);
    /// assert!(Filter::parse("dt >= ").unwrap_err().contains("character 6"));
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(text: &str) -> Result<Filter, String> {
        let toks = tokens(text)?;
        if toks.is_empty() {
            return Err("empty filter".to_string());
        }
        let mut p = Parser {
            toks,
            at: 0,
            len: text.len(),
        };
        let f = p.or()?;
        if p.at != p.toks.len() {
            return p.err("AND, OR or the end");
        }
        Ok(f)
    }

    /// Every filter of `items` (an empty list is no filter).
    pub fn all(items: Vec<Filter>) -> Option<Filter> {
        match items.len() {
            0 => None,
            1 => items.into_iter().next(),
            _ => Some(Filter::And(items)),
        }
    }

    /// The column names this filter mentions, in order (with repeats).
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |f| match f {
            Filter::Compare { column, .. } | Filter::In { column, .. } => out.push(column.as_str()),
            Filter::IsNull(c) | Filter::IsNotNull(c) => out.push(c.as_str()),
            _ => {}
        });
        out
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Filter)) {
        f(self);
        if let Filter::And(items) | Filter::Or(items) = self {
            for i in items {
                i.visit(f);
            }
        }
    }
}

impl core::str::FromStr for Filter {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Filter::parse(s)
    }
}

/// Three-valued truth of a filter against metadata: `No` proves no row matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tri {
    Yes,
    No,
    Maybe,
}

impl Tri {
    pub(super) fn possible(self) -> bool {
        self != Tri::No
    }
    fn not_proven(b: bool) -> Tri {
        if b {
            Tri::Maybe
        } else {
            Tri::No
        }
    }
    pub(super) fn exact(b: bool) -> Tri {
        if b {
            Tri::Yes
        } else {
            Tri::No
        }
    }
}

/// A compiled filter: leaves typed against the schema.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node<L> {
    Leaf(L),
    And(Vec<Node<L>>),
    Or(Vec<Node<L>>),
}

impl<L> Node<L> {
    pub(super) fn eval(&self, leaf: &mut impl FnMut(&L) -> Tri) -> Tri {
        match self {
            Node::Leaf(l) => leaf(l),
            Node::And(items) => {
                let mut out = Tri::Yes;
                for i in items {
                    match i.eval(leaf) {
                        Tri::No => return Tri::No,
                        Tri::Maybe => out = Tri::Maybe,
                        Tri::Yes => {}
                    }
                }
                out
            }
            Node::Or(items) => {
                let mut out = Tri::No;
                for i in items {
                    match i.eval(leaf) {
                        Tri::Yes => return Tri::Yes,
                        Tri::Maybe => out = Tri::Maybe,
                        Tri::No => {}
                    }
                }
                out
            }
        }
    }

    pub(super) fn leaves(&self) -> Vec<&L> {
        let mut out = Vec::new();
        fn walk<'a, L>(n: &'a Node<L>, out: &mut Vec<&'a L>) {
            match n {
                Node::Leaf(l) => out.push(l),
                Node::And(items) | Node::Or(items) => items.iter().for_each(|i| walk(i, out)),
            }
        }
        walk(self, &mut out);
        out
    }
}

/// What a leaf tests, on typed values `V`.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Test<V> {
    Cmp(CmpOp, V),
    In(Vec<V>),
    IsNull,
    IsNotNull,
}

impl<V: PartialOrd> Test<V> {
    /// The test on one value (`None` = null), exactly; comparisons with null are false.
    pub(super) fn on_value(&self, v: Option<&V>) -> bool {
        use core::cmp::Ordering::*;
        match (self, v) {
            (Test::IsNull, v) => v.is_none(),
            (Test::IsNotNull, v) => v.is_some(),
            (_, None) => false,
            (Test::Cmp(op, x), Some(v)) => {
                let o = v.partial_cmp(x);
                match op {
                    CmpOp::Eq => o == Some(Equal),
                    CmpOp::Ne => matches!(o, Some(Less | Greater)),
                    CmpOp::Lt => o == Some(Less),
                    CmpOp::Le => matches!(o, Some(Less | Equal)),
                    CmpOp::Gt => o == Some(Greater),
                    CmpOp::Ge => matches!(o, Some(Greater | Equal)),
                }
            }
            (Test::In(xs), Some(v)) => xs.iter().any(|x| v.partial_cmp(x) == Some(Equal)),
        }
    }

    /// Whether some value in `[min, max]` (non-null bounds; `None` when unknown) or a null
    /// (when `nulls` may be above zero) can pass; `nulls`: the known null count, `all_null`:
    /// known to be all nulls.
    pub(super) fn on_range(
        &self,
        bounds: Option<(&V, &V)>,
        nulls: Option<i64>,
        rows: Option<i64>,
    ) -> Tri {
        use core::cmp::Ordering::*;
        let all_null = matches!((nulls, rows), (Some(n), Some(r)) if n >= r && r > 0);
        match self {
            Test::IsNull => Tri::not_proven(nulls != Some(0)),
            Test::IsNotNull => Tri::not_proven(!all_null),
            _ if all_null => Tri::No,
            _ => {
                let Some((lo, hi)) = bounds else {
                    return Tri::Maybe;
                };
                let ge = |a: &V, b: &V| matches!(a.partial_cmp(b), Some(Greater | Equal) | None);
                let within = |x: &V| ge(x, lo) && ge(hi, x);
                Tri::not_proven(match self {
                    Test::Cmp(CmpOp::Eq, x) => within(x),
                    Test::Cmp(CmpOp::Ne, x) => {
                        !(lo.partial_cmp(x) == Some(Equal) && hi.partial_cmp(x) == Some(Equal))
                    }
                    Test::Cmp(CmpOp::Lt, x) => !ge(lo, x) || lo.partial_cmp(x).is_none(),
                    Test::Cmp(CmpOp::Le, x) => ge(x, lo),
                    Test::Cmp(CmpOp::Gt, x) => !ge(x, hi) || hi.partial_cmp(x).is_none(),
                    Test::Cmp(CmpOp::Ge, x) => ge(hi, x),
                    Test::In(xs) => xs.iter().any(within),
                    Test::IsNull | Test::IsNotNull => true,
                })
            }
        }
    }
}

/// Parses a list of `key=value` conditions as `--partition` and `--column` take them:
/// comma-separated, all of which must hold (AND). A value runs to the next comma and may hold
/// `=` and any character; a value that holds a comma or starts with a quote is single-quoted
/// with `''` for a quote (`p='a,b'`, `p='it''s'`); the empty text is the empty list. Errors
/// name the character where the list went wrong.
///
/// ```
/// use lakecore::paimon::parse_conditions;
/// let c = parse_conditions("dt=2024-01-02,p='a,b',q='it''s',r=x=y,s=é")?;
/// let pairs: Vec<(&str, &str)> = c.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
/// assert_eq!(
///     pairs,
///     [("dt", "2024-01-02"), ("p", "a,b"), ("q", "it's"), ("r", "x=y"), ("s", "é")]
/// );
/// assert!(parse_conditions("p='a,b").unwrap_err().contains("character 2"));
/// # Ok::<(), String>(())
/// ```
pub fn parse_conditions(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    let at = |rest: &str| text.len() - rest.len();
    while !rest.is_empty() {
        let Some(eq) = rest
            .find(['=', ','])
            .filter(|&i| rest.as_bytes().get(i) == Some(&b'='))
        else {
            return Err(format!("expected key=value at character {}", at(rest)));
        };
        let key = rest.get(..eq).unwrap_or_default().trim();
        if key.is_empty() {
            return Err(format!("empty key at character {}", at(rest)));
        }
        rest = rest.get(eq + 1..).unwrap_or_default();
        let value = if let Some(quoted) = rest.strip_prefix('\'') {
            let open = at(rest);
            let mut value = String::new();
            let mut tail = quoted;
            loop {
                let Some(q) = tail.find('\'') else {
                    return Err(format!("unclosed quote at character {open}"));
                };
                value.push_str(tail.get(..q).unwrap_or_default());
                tail = tail.get(q + 1..).unwrap_or_default();
                match tail.strip_prefix('\'') {
                    Some(after) => {
                        value.push('\'');
                        tail = after;
                    }
                    None => break,
                }
            }
            rest = tail;
            if !rest.is_empty() && !rest.starts_with(',') {
                return Err(format!(
                    "expected a comma or the end after the quoted value at character {}",
                    at(rest)
                ));
            }
            value
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let value = rest.get(..end).unwrap_or_default().to_string();
            rest = rest.get(end..).unwrap_or_default();
            value
        };
        out.push((key.to_string(), value));
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    Ok(out)
}

/// Writes one condition as [`parse_conditions`] reads it back: `key=value`, the value
/// single-quoted (quotes doubled) when it holds a comma or starts with a quote.
///
/// ```
/// use lakecore::paimon::{condition_text, parse_conditions};
/// assert_eq!(condition_text("p", "a,b"), "p='a,b'");
/// assert_eq!(condition_text("d", "2024-02-29"), "d=2024-02-29");
/// let text = condition_text("q", "'it's, fine'");
/// assert_eq!(parse_conditions(&text)?, [("q".to_string(), "'it's, fine'".to_string())]);
/// # Ok::<(), String>(())
/// ```
pub fn condition_text(key: &str, value: &str) -> String {
    if value.contains(',') || value.starts_with('\'') {
        format!("{key}='{}'", value.replace('\'', "''"))
    } else {
        format!("{key}={value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn grammar_round_trips_and_errors_point_at_the_character() {
        for text in [
            "a = 1",
            "a != 'x, y' OR b <> 2",
            "(a < 1 OR a > 5) AND b IN (1, 2, 'three') AND c IS NOT NULL",
            "\"odd col\" = 'it''s' AND d IS NULL",
            "dt <= 2024-02-29 and hr >= -3",
            "p = 'é=ü'",
        ] {
            let f = Filter::parse(text).unwrap();
            assert_eq!(Filter::parse(&f.to_string()).unwrap(), f, "{text} -> {f}");
        }
        let f = Filter::parse("a = 1 OR b = 2 AND c = 3").unwrap();
        assert!(matches!(&f, Filter::Or(v) if matches!(&v[1], Filter::And(_))));
        for (bad, at) in [
            ("a =", "character 3"),
            ("a = 1 AND", "character 9"),
            ("a IN (1, 2", "character 10"),
            ("a = 'open", "character 4"),
            ("a ~ 1", "character 2"),
            ("= 1", "character 0"),
            ("a = NULL", "IS NULL"),
        ] {
            let e = Filter::parse(bad).unwrap_err();
            assert!(e.contains(at), "{bad}: {e}");
        }
    }

    #[test]
    fn tests_on_values_and_ranges_agree_with_a_naive_model() {
        // For every test and every range [lo, hi] of 0..6 (with/without nulls), `on_range`
        // says No only when no value in the range (nor a null) passes `on_value`.
        let tests: Vec<Test<i64>> = {
            let mut t = vec![Test::IsNull, Test::IsNotNull, Test::In(vec![1, 4])];
            for op in [
                CmpOp::Eq,
                CmpOp::Ne,
                CmpOp::Lt,
                CmpOp::Le,
                CmpOp::Gt,
                CmpOp::Ge,
            ] {
                for x in 0..6 {
                    t.push(Test::Cmp(op, x));
                }
            }
            t
        };
        for test in &tests {
            for lo in 0..6i64 {
                for hi in lo..6 {
                    for nulls in [0i64, 1] {
                        let rows = (hi - lo + 1) + nulls;
                        let any = (lo..=hi).any(|v| test.on_value(Some(&v)))
                            || (nulls > 0 && test.on_value(None));
                        let t = test.on_range(Some((&lo, &hi)), Some(nulls), Some(rows));
                        if !any {
                            // Not required to prove it, but must never claim Yes.
                            assert_ne!(t, Tri::Yes);
                        }
                        if t == Tri::No {
                            assert!(!any, "{test:?} [{lo},{hi}] nulls {nulls}");
                        }
                        // Exactness where the range is one value and no nulls.
                        if lo == hi && nulls == 0 && !any {
                            assert_eq!(t, Tri::No, "{test:?} [{lo}] ");
                        }
                    }
                }
            }
        }
    }
}
