//! What a scan looks for and how it is typed against the table schema: the query
//! ([`ScanQuery`]), partition key types and values (dates, decimals, binary in hex), and the
//! query compiled into sidecar and entry predicates.

use super::filter::{Filter, Node, Test, Tri};
use super::manifest::ManifestFileMeta;
use crate::sidecar::BinaryRow;
use alloc::string::String;
use alloc::vec::Vec;

/// The partition value name Paimon uses for null unless the table option
/// `partition.default-name` says otherwise; `--partition key=__DEFAULT_PARTITION__` selects
/// null values.
pub const DEFAULT_PARTITION_NAME: &str = "__DEFAULT_PARTITION__";

/// What to look for. Every filter is optional; a data file is kept when it can match all of
/// them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanQuery {
    /// Inclusive row-ID ranges, any order. A file without row IDs can match any range.
    pub rows: Option<Vec<(u64, u64)>>,
    /// `(bucket, totalBuckets)` alternatives; `None` as total accepts any total.
    pub buckets: Option<Vec<(i32, Option<i32>)>>,
    /// `key = value` conditions on partition keys (all must hold), values as text, typed
    /// through the table schema. The table's `partition.default-name` (default
    /// [`DEFAULT_PARTITION_NAME`]) stands for null.
    pub partition: Vec<(String, String)>,
    /// `column = value` conditions on other columns (all must hold), values as text typed
    /// through the schema. Applied as the clients apply them: when they cover the bucket key
    /// of a fixed-bucket table, only the bucket the key hashes to is kept; and files whose
    /// value statistics (min/max) exclude a value are dropped. Files that might hold a match
    /// are kept: this is planning, not row filtering.
    pub columns: Vec<(String, String)>,
    /// Any further filter ([`Filter`]: comparisons, `IN`, `IS NULL`, `AND`, `OR`) on
    /// partition keys (exact) and other columns (by the clients' may-match rules); it must
    /// hold together with `partition` and `columns`.
    pub filter: Option<Filter>,
}

/// The type of a partition key, from the schema's type string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionType {
    /// BOOLEAN.
    Boolean,
    /// TINYINT.
    TinyInt,
    /// SMALLINT.
    SmallInt,
    /// INT.
    Int,
    /// BIGINT.
    BigInt,
    /// FLOAT.
    Float,
    /// DOUBLE.
    Double,
    /// DATE (days since 1970-01-01; written `YYYY-MM-DD` or as a day number).
    Date,
    /// CHAR, VARCHAR, STRING.
    String,
    /// BINARY, VARBINARY, BYTES (written as hex).
    Binary,
    /// DECIMAL with precision <= 18, stored compact (the unscaled value).
    Decimal {
        /// Digits after the point.
        scale: u32,
    },
    /// Any other type: it cannot be filtered on.
    Unsupported,
}

impl PartitionType {
    /// Parses a Paimon type string such as `INT NOT NULL`, `VARCHAR(10)`, `DECIMAL(10, 2)`.
    pub fn parse(text: &str) -> Self {
        let upper = text.trim().to_ascii_uppercase();
        let upper = upper.strip_suffix("NOT NULL").unwrap_or(&upper).trim();
        let (name, args) = match upper.split_once('(') {
            Some((n, rest)) => (n.trim(), rest.trim_end_matches(')')),
            None => (upper, ""),
        };
        match name {
            "BOOLEAN" => PartitionType::Boolean,
            "TINYINT" => PartitionType::TinyInt,
            "SMALLINT" => PartitionType::SmallInt,
            "INT" | "INTEGER" => PartitionType::Int,
            "BIGINT" => PartitionType::BigInt,
            "FLOAT" => PartitionType::Float,
            "DOUBLE" => PartitionType::Double,
            "DATE" => PartitionType::Date,
            "CHAR" | "VARCHAR" | "STRING" => PartitionType::String,
            "BINARY" | "VARBINARY" | "BYTES" => PartitionType::Binary,
            "DECIMAL" | "NUMERIC" | "DEC" => {
                let mut parts = args.split(',').map(|p| p.trim().parse::<u32>().ok());
                let precision = parts.next().flatten().unwrap_or(10);
                let scale = parts.next().flatten().unwrap_or(0);
                if precision <= 18 && scale <= precision {
                    PartitionType::Decimal { scale }
                } else {
                    PartitionType::Unsupported
                }
            }
            _ => PartitionType::Unsupported,
        }
    }
}

/// A typed partition value to compare with.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub(super) enum Value {
    /// Null (a bucket-key field's value in a hashed row).
    #[cfg_attr(not(test), allow(dead_code))]
    Null,
    Bool(bool),
    Int(i64),
    F32(f32),
    F64(f64),
    Bytes(Vec<u8>),
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` (a real calendar day) as days since 1970-01-01.
fn parse_civil_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y) && digits(m) && digits(d)) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

pub(super) fn parse_date(text: &str) -> Option<i64> {
    if let Ok(days) = text.parse::<i64>() {
        return Some(days);
    }
    parse_civil_date(text)
}

/// A point in time as milliseconds since the epoch: a number of milliseconds, or a UTC
/// date-time `YYYY-MM-DD[THH:MM[:SS[.fff]]][Z]` (a space may stand for `T`). Strict: no
/// day 30 of February, no hour 24.
///
/// ```
/// use lakecore::paimon::parse_timestamp_millis as ms;
/// assert_eq!(ms("1700000000000"), Some(1_700_000_000_000));
/// assert_eq!(ms("1970-01-02"), Some(86_400_000));
/// assert_eq!(ms("2024-02-29T12:30:00.250Z"), Some(1_709_209_800_250));
/// assert_eq!(ms("2024-02-30"), None);
/// assert_eq!(ms("2024-01-01T24:00"), None);
/// ```
pub fn parse_timestamp_millis(text: &str) -> Option<i64> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let days = parse_civil_date(date)?;
    let mut millis = 0i64;
    if let Some(time) = time {
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let mut fields = hms.split(':');
        let two = |f: Option<&str>| -> Option<i64> {
            let f = f?;
            (f.len() == 2 && f.bytes().all(|b| b.is_ascii_digit())).then(|| f.parse().ok())?
        };
        let h = two(fields.next())?;
        let m = two(fields.next())?;
        let sec = match fields.next() {
            Some(f) => two(Some(f))?,
            None if frac.is_empty() => 0,
            None => return None,
        };
        if fields.next().is_some() || h > 23 || m > 59 || sec > 59 {
            return None;
        }
        if !frac.is_empty() && (frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit())) {
            return None;
        }
        let frac_ms: i64 = if frac.is_empty() {
            0
        } else {
            frac.parse::<i64>().ok()? * 10i64.pow(3 - u32::try_from(frac.len()).ok()?)
        };
        millis = ((h * 60 + m) * 60 + sec) * 1000 + frac_ms;
    }
    days.checked_mul(86_400_000)?.checked_add(millis)
}

pub(super) fn parse_decimal(text: &str, scale: u32) -> Option<i64> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let scale = usize::try_from(scale).ok()?;
    if frac.len() > scale || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let mut unscaled: i64 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        unscaled = unscaled.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    for _ in frac.len()..scale {
        unscaled = unscaled.checked_mul(10)?;
    }
    Some(if neg { -unscaled } else { unscaled })
}

pub(super) fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let text = text.strip_prefix("0x").unwrap_or(text);
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

pub(super) fn typed(ty: PartitionType, text: &str) -> Option<Value> {
    Some(match ty {
        PartitionType::Boolean => match text.to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return None,
        },
        PartitionType::TinyInt => Value::Int(i64::from(text.parse::<i8>().ok()?)),
        PartitionType::SmallInt => Value::Int(i64::from(text.parse::<i16>().ok()?)),
        PartitionType::Int => Value::Int(i64::from(text.parse::<i32>().ok()?)),
        PartitionType::BigInt => Value::Int(text.parse::<i64>().ok()?),
        PartitionType::Float => Value::F32(text.parse().ok()?),
        PartitionType::Double => Value::F64(text.parse().ok()?),
        PartitionType::Date => Value::Int(i64::from(i32::try_from(parse_date(text)?).ok()?)),
        PartitionType::String => Value::Bytes(text.as_bytes().to_vec()),
        PartitionType::Binary => Value::Bytes(parse_hex(text)?),
        PartitionType::Decimal { scale } => Value::Int(parse_decimal(text, scale)?),
        PartitionType::Unsupported => return None,
    })
}

/// Field `index` of `row` as a typed value (`None` for null or an unsupported type).
pub(super) fn read_field(
    row: &BinaryRow<'_>,
    i: u32,
    ty: PartitionType,
) -> crate::Result<Option<Value>> {
    if row.is_null(i)? {
        return Ok(None);
    }
    Ok(match ty {
        PartitionType::Boolean => row.get_bool(i)?.map(Value::Bool),
        PartitionType::TinyInt => row.get_i8(i)?.map(|v| Value::Int(v.into())),
        PartitionType::SmallInt => row.get_i16(i)?.map(|v| Value::Int(v.into())),
        PartitionType::Int | PartitionType::Date => row.get_i32(i)?.map(|v| Value::Int(v.into())),
        PartitionType::BigInt | PartitionType::Decimal { .. } => row.get_i64(i)?.map(Value::Int),
        PartitionType::Float => row.get_f32(i)?.map(Value::F32),
        PartitionType::Double => row.get_f64(i)?.map(Value::F64),
        PartitionType::String | PartitionType::Binary => {
            row.get_bytes(i)?.map(|b| Value::Bytes(b.to_vec()))
        }
        PartitionType::Unsupported => None,
    })
}

/// What a filter leaf applies to.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Target {
    /// Field `i` of the partition row: tested exactly.
    Partition(u32),
    /// A value column: field `index` of the schema, tested on statistics.
    Column { name: String, index: u32 },
}

/// One typed filter leaf.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Leaf {
    pub(super) target: Target,
    pub(super) ty: PartitionType,
    pub(super) test: Test<Value>,
}

impl Leaf {
    /// Whether the leaf tests a partition key (not a column's statistics).
    fn reads_partition(&self) -> bool {
        matches!(self.target, Target::Partition(_))
    }

    /// The leaf on a partition row: exact for partition leaves, `Maybe` for columns.
    fn on_partition(&self, row: &BinaryRow<'_>) -> crate::Result<Tri> {
        match self.target {
            Target::Partition(i) => Ok(Tri::exact(
                self.test.on_value(read_field(row, i, self.ty)?.as_ref()),
            )),
            Target::Column { .. } => Ok(Tri::Maybe),
        }
    }

    /// The leaf on statistics rows `min`/`max` (BinaryRows with arity prefix) at field
    /// `index`, with the field's null count and the row count when known.
    pub(super) fn on_stats(
        &self,
        index: u32,
        min: &[u8],
        max: &[u8],
        nulls: Option<i64>,
        rows: Option<i64>,
    ) -> Tri {
        let bounds = || -> crate::Result<Option<(Value, Value)>> {
            let lo = BinaryRow::from_partition(min, 0)?;
            let hi = BinaryRow::from_partition(max, 0)?;
            Ok(read_field(&lo, index, self.ty)?.zip(read_field(&hi, index, self.ty)?))
        };
        match bounds() {
            Ok(b) => self
                .test
                .on_range(b.as_ref().map(|(l, h)| (l, h)), nulls, rows),
            Err(_) => Tri::Maybe,
        }
    }
}

/// The query compiled against the table schema.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Compiled {
    pub(super) rows: Option<Vec<(u64, u64)>>,
    pub(super) buckets: Option<Vec<(i32, Option<i32>)>>,
    /// Partition and column conditions together.
    pub(super) filter: Option<Node<Leaf>>,
    /// Key hashes the bucket-key conditions allow (`None`: any bucket).
    pub(super) key_hashes: Option<Vec<u32>>,
    /// The schema id the column indexes refer to.
    pub(super) schema_id: u64,
    /// How files' statistics may drop them (see [`StatsRule`]).
    pub(super) stats_rule: StatsRule,
}

/// Which statistics can drop a file for a column condition, as the clients decide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum StatsRule {
    /// Append table: the value statistics.
    #[default]
    Values,
    /// Primary-key table: only the key statistics, for primary-key fields (value statistics
    /// of a level-0 file could drop an update and expose an older value).
    Keys(Vec<String>),
    /// Data-evolution table: none (a row's columns live in several files).
    None,
}

/// Types `text` for a column of type `ty`, naming the column in the error.
pub(super) fn typed_value(ty: PartitionType, text: &str, column: &str) -> Result<Value, String> {
    typed(ty, text).ok_or_else(|| {
        alloc::format!(
            "value {text:?} is not a valid {} for column {column:?}",
            type_words(ty)
        )
    })
}

/// A type and the form its values are written in, for error messages.
fn type_words(ty: PartitionType) -> alloc::string::String {
    match ty {
        PartitionType::Boolean => "BOOLEAN (true or false)".into(),
        PartitionType::TinyInt => "TINYINT (-128..=127)".into(),
        PartitionType::SmallInt => "SMALLINT (-32768..=32767)".into(),
        PartitionType::Int => "INT (a 32-bit integer)".into(),
        PartitionType::BigInt => "BIGINT (a 64-bit integer)".into(),
        PartitionType::Float => "FLOAT (a number)".into(),
        PartitionType::Double => "DOUBLE (a number)".into(),
        PartitionType::Date => "DATE (YYYY-MM-DD, a day that exists)".into(),
        PartitionType::String => "STRING".into(),
        PartitionType::Binary => "BINARY (hex)".into(),
        PartitionType::Decimal { scale } => {
            alloc::format!("DECIMAL of scale {scale} (at most {scale} digits after the point)")
        }
        PartitionType::Unsupported => "value of a type lakecore does not compare".into(),
    }
}

impl Compiled {
    pub(super) fn bucket_passes(&self, bucket: i32, total: i32) -> bool {
        self.buckets.as_ref().is_none_or(|alternatives| {
            alternatives
                .iter()
                .any(|&(b, t)| b == bucket && t.is_none_or(|t| t == total))
        })
    }

    /// Whether a file in `bucket` of `total` buckets can hold the queried bucket key.
    pub(super) fn key_bucket_passes(&self, bucket: i32, total: i32) -> bool {
        match &self.key_hashes {
            Some(hashes) if total > 0 => hashes
                .iter()
                .any(|&h| super::bucket::bucket_of(h, total) == Some(bucket)),
            _ => true,
        }
    }

    /// Whether the filter has partition leaves.
    pub(super) fn filters_partitions(&self) -> bool {
        self.filter
            .as_ref()
            .is_some_and(|f| f.leaves().into_iter().any(|l| l.reads_partition()))
    }

    /// Whether the filter reads nothing but the partition (every leaf a partition leaf):
    /// then an entry's verdict depends on its partition bytes alone.
    pub(super) fn partition_only(&self) -> bool {
        self.filter
            .as_ref()
            .is_some_and(|f| f.leaves().into_iter().all(|l| l.reads_partition()))
    }

    /// Whether the `_PARTITION` bytes `tuple` can pass the filter.
    pub(super) fn partition_passes(&self, tuple: &[u8]) -> crate::Result<bool> {
        let Some(filter) = &self.filter else {
            return Ok(true);
        };
        let row = BinaryRow::from_partition(tuple, 0)?;
        let mut failed = None;
        let t = filter.eval(&mut |leaf| match leaf.on_partition(&row) {
            Ok(t) => t,
            Err(e) => {
                failed = Some(e);
                Tri::Maybe
            }
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(t.possible()),
        }
    }

    /// Whether manifest `m` can hold a matching entry, by the manifest list's statistics
    /// (partition min/max and null counts, bucket and row-ID ranges), as the clients prune.
    pub(super) fn manifest_may_match(&self, m: &ManifestFileMeta) -> bool {
        if let (Some(stats), Some(filter)) = (&m.partition_stats, &self.filter) {
            let t = filter.eval(&mut |leaf| match leaf.target {
                Target::Partition(i) => leaf.on_stats(
                    i,
                    &stats.min,
                    &stats.max,
                    stats
                        .null_counts
                        .get(usize::try_from(i).unwrap_or(usize::MAX))
                        .copied()
                        .flatten(),
                    None,
                ),
                Target::Column { .. } => Tri::Maybe,
            });
            if !t.possible() {
                return false;
            }
        }
        if let (Some(alternatives), Some((lo, hi))) = (&self.buckets, m.bucket_range) {
            if !alternatives.iter().any(|&(b, _)| lo <= b && b <= hi) {
                return false;
            }
        }
        if let (Some(ranges), Some((lo, hi))) = (&self.rows, m.row_id_range) {
            if let (Ok(lo), Ok(hi)) = (u64::try_from(lo), u64::try_from(hi)) {
                if !ranges.iter().any(|&(a, b)| a <= hi && lo <= b) {
                    return false;
                }
            }
        }
        true
    }

    /// Whether entry rows `[first, first + count - 1]` meet a queried range; entries without
    /// usable row IDs can match.
    pub(super) fn rows_pass(&self, first_row_id: Option<i64>, row_count: i64) -> bool {
        let Some(ranges) = &self.rows else {
            return true;
        };
        let (Some(first), Ok(count)) = (first_row_id, u64::try_from(row_count)) else {
            return true;
        };
        let Ok(first) = u64::try_from(first) else {
            return true;
        };
        let Some(last) = count.checked_sub(1).and_then(|c| first.checked_add(c)) else {
            return true;
        };
        ranges.iter().any(|&(a, b)| a <= last && first <= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_decimals() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2024-01-02"), Some(19_724));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_decimal("12.5", 2), Some(1250));
        assert_eq!(parse_decimal("-0.01", 2), Some(-1));
        assert_eq!(parse_decimal("1.234", 2), None);
        assert_eq!(
            PartitionType::parse("DECIMAL(10, 2) NOT NULL"),
            PartitionType::Decimal { scale: 2 }
        );
        assert_eq!(PartitionType::parse("VARCHAR(3)"), PartitionType::String);
        assert_eq!(
            PartitionType::parse("TIMESTAMP(3)"),
            PartitionType::Unsupported
        );
    }
}

/// A filter on partition keys, typed through a table schema, evaluated on the `_PARTITION`
/// bytes of a sidecar dictionary or a manifest entry: the partition half of what the planner
/// does with a [`ScanQuery`], for tools that hold partition tuples but plan nothing (the
/// CLI's `sidecar select --where`).
///
/// ```
/// use lakecore::paimon::{Filter, PartitionPredicate, Table};
/// use lakecore::sidecar::Sidecar;
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs");
/// let schema = Table::open(dir)?.schema(0)?;
/// let filter = Filter::parse("dt = '2024-01-02' AND hr >= 3")?;
/// let predicate = PartitionPredicate::new(&schema, &filter)?;
/// let manifest = std::fs::read_dir(format!("{dir}/manifest"))?
///     .map(|e| e.unwrap().path())
///     .find(|p| p.to_string_lossy().ends_with(".avro.sidecar"))
///     .unwrap();
/// let bytes = std::fs::read(manifest)?;
/// let sidecar = Sidecar::parse(&bytes)?;
/// let kept = sidecar.partitions().filter(|t| predicate.passes(t) == Ok(true)).count();
/// assert!(kept < sidecar.partition_count() as usize);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct PartitionPredicate {
    compiled: Compiled,
}

impl PartitionPredicate {
    /// `filter` typed through `schema`. Every column it names must be a partition key
    /// (other columns need file statistics, which partition tuples do not have): otherwise,
    /// or when a value does not parse as its key's type,
    /// [`ScanError::Query`](super::ScanError::Query) says which.
    pub fn new(schema: &super::TableSchema, filter: &Filter) -> Result<Self, super::ScanError> {
        let keys: Vec<&str> = schema
            .partition_keys
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        if let Some(other) = filter.columns().into_iter().find(|c| !keys.contains(c)) {
            return Err(super::ScanError::Query(alloc::format!(
                "{other:?} is not a partition key (partition keys: {keys:?}); only partition keys can be tested here"
            )));
        }
        let query = ScanQuery {
            filter: Some(filter.clone()),
            ..ScanQuery::default()
        };
        Ok(PartitionPredicate {
            compiled: super::plan::compile(&query, schema, 0)?,
        })
    }

    /// Whether the partition tuple `tuple` (`_PARTITION` bytes) passes; an error for bytes
    /// that are not a valid partition row.
    pub fn passes(&self, tuple: &[u8]) -> crate::Result<bool> {
        self.compiled.partition_passes(tuple)
    }
}
