//! The entry model and the validation of every input (R-CAT, R-ENT, R-ACC-1/2/6, R-LIM, R-RET-5,
//! R-API-3 filters, R-HOST-1 agent ids).

use crate::arg::Arg;
use crate::error::{MemoryError, Result};
use crate::time;
use sha2::{Digest, Sha256};

pub const MAX_KEY_BYTES: usize = 1024;
pub const MAX_VALUE_BYTES: usize = 1_048_576;
pub const MAX_QUERY_BYTES: u64 = 4 * 1024 * 1024;
pub const DEFAULT_QUERY_LIMIT: u32 = 100;
pub const MAX_QUERY_LIMIT: u32 = 1000;
pub const MAX_RETENTION_DAYS: i64 = 2_147_483_647;

/// Entry categories, in the order eviction takes them (R-CAT, R-QUO-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Cache = 0,
    Pattern = 1,
    Context = 2,
    Preference = 3,
}

impl Category {
    pub const ALL: [Category; 4] = [Category::Cache, Category::Pattern, Category::Context, Category::Preference];
    /// What eviction may take, in its order (R-QUO-3): never `PREFERENCE`.
    pub const EVICTABLE: [Category; 3] = [Category::Cache, Category::Pattern, Category::Context];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Cache => "CACHE",
            Category::Pattern => "PATTERN",
            Category::Context => "CONTEXT",
            Category::Preference => "PREFERENCE",
        }
    }
    pub fn from_str(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == s)
    }
    pub fn from_i64(v: i64) -> Option<Category> {
        Category::ALL.into_iter().find(|c| *c as i64 == v)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    CreatorGeneOnly = 0,
    SameDomain = 1,
    AllGenes = 2,
    DeployerConfigured = 3,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::CreatorGeneOnly, Scope::SameDomain, Scope::AllGenes, Scope::DeployerConfigured];
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::CreatorGeneOnly => "CREATOR_GENE_ONLY",
            Scope::SameDomain => "SAME_DOMAIN",
            Scope::AllGenes => "ALL_GENES",
            Scope::DeployerConfigured => "DEPLOYER_CONFIGURED",
        }
    }
    pub fn from_i64(v: i64) -> Option<Scope> {
        Scope::ALL.into_iter().find(|c| *c as i64 == v)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharePolicy {
    Private = 0,
    AnonymizedShare = 1,
    KnowledgeGene = 2,
}

impl SharePolicy {
    pub const ALL: [SharePolicy; 3] = [SharePolicy::Private, SharePolicy::AnonymizedShare, SharePolicy::KnowledgeGene];
    pub fn as_str(self) -> &'static str {
        match self {
            SharePolicy::Private => "PRIVATE",
            SharePolicy::AnonymizedShare => "ANONYMIZED_SHARE",
            SharePolicy::KnowledgeGene => "KNOWLEDGE_GENE",
        }
    }
    pub fn from_i64(v: i64) -> Option<SharePolicy> {
        SharePolicy::ALL.into_iter().find(|c| *c as i64 == v)
    }
    /// Sharing that needs the agent's data policy to support anonymization (R-POL-1).
    pub fn needs_anonymization(self) -> bool {
        self != SharePolicy::Private
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AccessPolicy {
    pub read_scope: Scope,
    pub write_scope: Scope,
    pub share_policy: SharePolicy,
}

impl Default for AccessPolicy {
    /// R-ACC-1.
    fn default() -> Self {
        AccessPolicy { read_scope: Scope::SameDomain, write_scope: Scope::SameDomain, share_policy: SharePolicy::Private }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetentionPolicy {
    /// `None`: keep forever.
    pub max_retention_days: Option<i64>,
    pub auto_delete_on_termination: bool,
    pub anonymization_supported: bool,
}

/// The `retentionPolicy` argument of a write: omitted (`undefined`) is not the same as `null`
/// (R-API-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetentionArg {
    Omitted,
    /// `null`: follow the agent's data policy.
    FollowAgent,
    Policy(RetentionPolicy),
}

/// The agent's data policy (R-POL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataPolicy {
    pub anonymization_supported: bool,
    pub max_retention_days: Option<i64>,
}

/// A stored entry as callers see it (R-ENT).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub entry_id: String,
    pub category: Category,
    pub key: String,
    pub value: Vec<u8>,
    pub created_by: String,
    pub last_accessed_by: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub access_policy: AccessPolicy,
    pub retention_policy: Option<RetentionPolicy>,
}

impl Entry {
    pub fn size(&self) -> u64 {
        entry_size(&self.key, self.value.len())
    }
}

/// What a query asks for, validated (R-API-3, R-LIM-3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filter {
    pub category: Option<Category>,
    pub key_prefix: Option<String>,
    /// Inclusive lower bound on `updatedAt`, in ms.
    pub since: Option<i64>,
    /// Exclusive upper bound on `updatedAt`, in ms.
    pub until: Option<i64>,
    pub limit: u32,
}

/// R-ENT: lowercase hex SHA-256 of `UTF8(agentId) ‖ 0x00 ‖ UTF8(key)`.
pub fn entry_id(agent_id: &str, key: &str) -> String {
    let mut h = Sha256::new();
    h.update(agent_id.as_bytes());
    h.update([0u8]);
    h.update(key.as_bytes());
    hex(&h.finalize())
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// R-ENT-2.
pub fn entry_size(key: &str, value_len: usize) -> u64 {
    (key.len() + value_len) as u64
}

// ---------------------------------------------------------------------------------------------
// Validation. Every function names the argument it checks and says how to fix it.

/// R-LIM-1.
pub fn parse_key(arg: &Arg) -> Result<String> {
    key_of(arg).map(str::to_string)
}

/// R-LIM-1: the key, checked, borrowed from the argument.
pub fn key_of(arg: &Arg) -> Result<&str> {
    match arg {
        Arg::Str(s) => {
            if s.is_empty() {
                Err(MemoryError::invalid("key must not be empty"))
            } else if s.contains('\0') {
                Err(MemoryError::invalid("key must not contain a NUL character"))
            } else if s.len() > MAX_KEY_BYTES {
                Err(MemoryError::invalid(format!(
                    "key is {} UTF-8 bytes; it may be at most {MAX_KEY_BYTES}",
                    s.len()
                )))
            } else {
                Ok(s)
            }
        }
        Arg::InvalidStr => Err(MemoryError::invalid(
            "key is not valid Unicode (it holds a lone UTF-16 surrogate)",
        )),
        other => Err(MemoryError::invalid(format!("key must be a string, not {}", other.kind()))),
    }
}

/// R-LIM-2.
pub fn parse_value(arg: Arg) -> Result<Vec<u8>> {
    let too_large = |len: usize| {
        MemoryError::invalid(format!("value is {len} bytes; it may be at most {MAX_VALUE_BYTES} (1 MiB)"))
    };
    match arg {
        Arg::Bytes(b) if b.len() <= MAX_VALUE_BYTES => Ok(b),
        Arg::Bytes(b) => Err(too_large(b.len())),
        Arg::OversizedBytes(len) => Err(too_large(len)),
        other => Err(MemoryError::invalid(format!(
            "value must be a Uint8Array (a Buffer is one), not {}; encode text with new TextEncoder().encode(…)",
            other.kind()
        ))),
    }
}

fn enum_value<T: Copy>(what: &str, arg: &Arg, all: &[T], name: impl Fn(T) -> &'static str) -> Result<T> {
    let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
    match arg {
        Arg::Str(s) => all.iter().copied().find(|v| name(*v) == s).ok_or_else(|| {
            MemoryError::invalid(format!("{what} {s:?} is unknown; use one of {} (upper case)", names.join(", ")))
        }),
        other => Err(MemoryError::invalid(format!(
            "{what} must be one of {}, not {}",
            names.join(", "),
            other.kind()
        ))),
    }
}

/// R-CAT-1.
pub fn parse_category(arg: &Arg) -> Result<Category> {
    enum_value("category", arg, &Category::ALL, Category::as_str)
}

/// A category that may be omitted (`undefined` or `null`).
pub fn parse_optional_category(arg: &Arg) -> Result<Option<Category>> {
    if arg.is_absent() {
        Ok(None)
    } else {
        parse_category(arg).map(Some)
    }
}

/// Checks that `fields` are exactly `expected`, with no unknown or missing one.
pub(crate) fn exact_fields<'a>(what: &str, fields: &'a [(String, Arg)], expected: &[&str]) -> Result<Vec<&'a Arg>> {
    for (name, _) in fields {
        if !expected.contains(&name.as_str()) {
            return Err(MemoryError::invalid(format!(
                "{what} has an unknown field {name:?}; it takes exactly {}",
                expected.join(", ")
            )));
        }
    }
    expected
        .iter()
        .map(|want| {
            fields.iter().find(|(n, _)| n == want).map(|(_, v)| v).ok_or_else(|| {
                MemoryError::invalid(format!("{what} lacks the field {want:?}; it takes exactly {}", expected.join(", ")))
            })
        })
        .collect()
}

/// R-ACC-2. `undefined` means "not given"; `null` is not an access policy.
pub fn parse_access_policy(arg: &Arg) -> Result<Option<AccessPolicy>> {
    match arg {
        Arg::Undefined => Ok(None),
        Arg::Object(fields) => {
            let v = exact_fields("accessPolicy", fields, &["readScope", "writeScope", "sharePolicy"])?;
            Ok(Some(AccessPolicy {
                read_scope: enum_value("accessPolicy.readScope", v[0], &Scope::ALL, Scope::as_str)?,
                write_scope: enum_value("accessPolicy.writeScope", v[1], &Scope::ALL, Scope::as_str)?,
                share_policy: enum_value("accessPolicy.sharePolicy", v[2], &SharePolicy::ALL, SharePolicy::as_str)?,
            }))
        }
        other => Err(MemoryError::invalid(format!(
            "accessPolicy must be an object {{ readScope, writeScope, sharePolicy }} or omitted, not {}",
            other.kind()
        ))),
    }
}

fn parse_days(what: &str, arg: &Arg, allow_null: bool) -> Result<Option<i64>> {
    match arg {
        Arg::Null if allow_null => Ok(None),
        Arg::Number(n) if n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_RETENTION_DAYS as f64 => Ok(Some(*n as i64)),
        other => {
            let shown = match other {
                Arg::Number(n) => format!("{n}"),
                o => o.kind().to_string(),
            };
            Err(MemoryError::invalid(format!(
                "{what} must be a whole number of days from 1 to {MAX_RETENTION_DAYS}{}, not {shown}",
                if allow_null { " or null (forever)" } else { "" }
            )))
        }
    }
}

fn parse_bool(what: &str, arg: &Arg) -> Result<bool> {
    match arg {
        Arg::Bool(b) => Ok(*b),
        other => Err(MemoryError::invalid(format!("{what} must be a boolean, not {}", other.kind()))),
    }
}

/// R-RET-5, with R-API-2's distinction between omitted and `null`.
pub fn parse_retention_arg(arg: &Arg) -> Result<RetentionArg> {
    match arg {
        Arg::Undefined => Ok(RetentionArg::Omitted),
        Arg::Null => Ok(RetentionArg::FollowAgent),
        Arg::Object(fields) => {
            let v = exact_fields(
                "retentionPolicy",
                fields,
                &["maxRetentionDays", "autoDeleteOnTermination", "anonymizationSupported"],
            )?;
            Ok(RetentionArg::Policy(RetentionPolicy {
                max_retention_days: parse_days("retentionPolicy.maxRetentionDays", v[0], true)?,
                auto_delete_on_termination: parse_bool("retentionPolicy.autoDeleteOnTermination", v[1])?,
                anonymization_supported: parse_bool("retentionPolicy.anonymizationSupported", v[2])?,
            }))
        }
        other => Err(MemoryError::invalid(format!(
            "retentionPolicy must be {{ maxRetentionDays, autoDeleteOnTermination, anonymizationSupported }}, null (follow the agent's data policy) or omitted, not {}",
            other.kind()
        ))),
    }
}

/// The agent's data policy as given to `createAgentMemory`/`createTestMemory` (R-POL).
/// Omitted fields take the defaults.
pub fn parse_data_policy(arg: &Arg) -> Result<DataPolicy> {
    let mut p = DataPolicy::default();
    match arg {
        Arg::Undefined | Arg::Null => {}
        Arg::Object(fields) => {
            for (name, v) in fields {
                match name.as_str() {
                    "anonymizationSupported" if v.is_absent() => {}
                    "anonymizationSupported" => p.anonymization_supported = parse_bool("dataPolicy.anonymizationSupported", v)?,
                    "maxRetentionDays" if matches!(v, Arg::Undefined) => {}
                    "maxRetentionDays" => p.max_retention_days = parse_days("dataPolicy.maxRetentionDays", v, true)?,
                    other => {
                        return Err(MemoryError::invalid(format!(
                            "dataPolicy has an unknown field {other:?}; it takes anonymizationSupported and maxRetentionDays"
                        )))
                    }
                }
            }
        }
        other => {
            return Err(MemoryError::invalid(format!(
                "dataPolicy must be an object {{ anonymizationSupported, maxRetentionDays }}, not {}",
                other.kind()
            )))
        }
    }
    Ok(p)
}

fn parse_limit(arg: &Arg) -> Result<u32> {
    match arg {
        Arg::Undefined | Arg::Null => Ok(DEFAULT_QUERY_LIMIT),
        Arg::Number(n) if n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_QUERY_LIMIT as f64 => Ok(*n as u32),
        other => {
            let shown = match other {
                Arg::Number(n) => format!("{n}"),
                o => o.kind().to_string(),
            };
            Err(MemoryError::invalid(format!(
                "filter.limit must be a whole number from 1 to {MAX_QUERY_LIMIT}, not {shown}"
            )))
        }
    }
}

fn parse_time(field: &str, arg: &Arg) -> Result<Option<i64>> {
    match arg {
        Arg::Undefined | Arg::Null => Ok(None),
        Arg::Str(s) => time::parse_rfc3339_ceil_ms(field, s).map(Some),
        other => Err(MemoryError::invalid(format!(
            "filter.{field} must be an RFC 3339 string such as 2026-11-30T01:38:19.123Z, not {}",
            other.kind()
        ))),
    }
}

/// A plain key prefix (R-API-3: no wildcards); `undefined`, `null` and `""` are not given.
pub fn parse_key_prefix(what: &str, arg: &Arg) -> Result<Option<String>> {
    match arg {
        Arg::Undefined | Arg::Null => Ok(None),
        Arg::Str(s) if s.is_empty() => Ok(None),
        Arg::Str(s) => Ok(Some(s.clone())),
        Arg::InvalidStr => Err(MemoryError::invalid(format!("{what} is not valid Unicode (it holds a lone UTF-16 surrogate)"))),
        other => Err(MemoryError::invalid(format!("{what} must be a string, not {}", other.kind()))),
    }
}

/// R-API-3: fields `undefined` or `null` are not given; unknown fields are rejected.
pub fn parse_filter(arg: &Arg) -> Result<Filter> {
    let mut f = Filter { limit: DEFAULT_QUERY_LIMIT, ..Filter::default() };
    let fields = match arg {
        Arg::Undefined | Arg::Null => return Ok(f),
        Arg::Object(fields) => fields,
        other => {
            return Err(MemoryError::invalid(format!(
                "filter must be an object {{ category?, keyPrefix?, since?, until?, limit? }}, not {}",
                other.kind()
            )))
        }
    };
    for (name, v) in fields {
        match name.as_str() {
            "category" => f.category = parse_optional_category(v)?,
            "keyPrefix" => f.key_prefix = parse_key_prefix("filter.keyPrefix", v)?,
            "since" => f.since = parse_time("since", v)?,
            "until" => f.until = parse_time("until", v)?,
            "limit" => f.limit = parse_limit(v)?,
            other => {
                return Err(MemoryError::invalid(format!(
                    "filter has an unknown field {other:?}; it takes category, keyPrefix, since, until and limit"
                )))
            }
        }
    }
    Ok(f)
}

/// A write's arguments, validated (R-API-2), in the order the contract checks them.
pub struct WriteRequest {
    pub key: String,
    pub value: Vec<u8>,
    pub category: Category,
    pub access: Option<AccessPolicy>,
    pub retention: RetentionArg,
    /// R-ENT-2: what the entry counts against the quota.
    pub size: u64,
}

impl WriteRequest {
    pub fn parse(key: &Arg, value: Arg, category: &Arg, access: &Arg, retention: &Arg) -> Result<WriteRequest> {
        let key = parse_key(key)?;
        let value = parse_value(value)?;
        let size = entry_size(&key, value.len());
        Ok(WriteRequest {
            category: parse_category(category)?,
            access: parse_access_policy(access)?,
            retention: parse_retention_arg(retention)?,
            key,
            value,
            size,
        })
    }
}

/// R-HOST-1: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`. Also what keeps an id from naming a path.
pub fn check_agent_id(id: &str) -> Result<()> {
    let b = id.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(MemoryError::invalid(format!(
            "agentId {id:?} is not valid: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )))
    }
}

/// R-ACC-4: `^v2:[0-9a-f]{64}$`.
pub fn is_valid_gene_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 67 && b.starts_with(b"v2:") && b[3..].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// The gene id of a test memory (`createTestMemory({ geneId })`, `forGene`): a wrong id is the
/// test author's mistake, refused at once rather than a memory whose every call is denied.
pub fn check_test_gene_id(id: &Arg) -> Result<()> {
    match id {
        Arg::Undefined => Ok(()),
        Arg::Str(s) if is_valid_gene_id(s) => Ok(()),
        Arg::Str(s) => Err(MemoryError::invalid(format!(
            "geneId {s:?} is not a v2 gene id (v2: followed by 64 lower-case hex digits); omit it to use TEST_GENE_ID, or give the id that `rotifer gene id <gene>` prints"
        ))),
        other => Err(MemoryError::invalid(format!("geneId must be a v2 gene id string, not {}", other.kind()))),
    }
}

/// R-ACC-6: `^[a-z0-9]+(\.[a-z0-9]+)*$`.
pub fn check_domain(domain: &str) -> Result<()> {
    let ok = !domain.is_empty()
        && domain.split('.').all(|part| !part.is_empty() && part.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(MemoryError::invalid(format!(
            "domain {domain:?} is not valid: use lower-case letters and digits in dot-separated parts, like \"text.format\""
        )))
    }
}

/// The fields of an options object, checked against the names it may have.
pub fn option_fields<'a>(what: &str, arg: &'a Arg, allowed: &[&str]) -> Result<Vec<(&'a str, &'a Arg)>> {
    let fields = match arg {
        Arg::Object(f) => f,
        other => return Err(MemoryError::invalid(format!("{what} must be an object, not {}", other.kind()))),
    };
    let mut out = Vec::with_capacity(fields.len());
    for (name, v) in fields {
        if !allowed.contains(&name.as_str()) {
            return Err(MemoryError::invalid(format!(
                "{what} has an unknown field {name:?}; it takes {}",
                allowed.join(", ")
            )));
        }
        if !matches!(v, Arg::Undefined) {
            out.push((name.as_str(), v));
        }
    }
    Ok(out)
}

/// A quota given as text (R-QUO-2) or as a number of bytes; absent means the default.
pub fn parse_quota_arg(arg: Option<&Arg>) -> Result<u64> {
    match arg {
        None | Some(Arg::Undefined) | Some(Arg::Null) => Ok(crate::quota::DEFAULT_QUOTA),
        Some(Arg::Str(s)) => crate::quota::parse_memory_quota(s),
        Some(Arg::Number(n)) => crate::quota::check_quota_bytes(*n),
        Some(other) => Err(MemoryError::invalid(format!("quota must be text like \"50MB\" or a number of bytes, not {}", other.kind()))),
    }
}

// ---------------------------------------------------------------------------------------------
// Key prefixes

/// The smallest byte string greater than every string starting with `prefix`, if any.
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// The key range `[from, to)` of a plain byte prefix; both `None` without a prefix.
pub(crate) fn key_range(prefix: Option<&str>) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    match prefix {
        Some(p) => (Some(p.as_bytes().to_vec()), prefix_successor(p.as_bytes())),
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode::InvalidInput;

    fn obj(fields: &[(&str, Arg)]) -> Arg {
        Arg::Object(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn entry_id_is_sha256_of_agent_nul_key() {
        // R-ENT entryId formula; reference: printf 'agent-1\0k' | sha256sum
        assert_eq!(entry_id("agent-1", "k"), hex(&Sha256::digest(b"agent-1\0k")));
        assert_eq!(entry_id("a", "b").len(), 64);
        assert_ne!(entry_id("a", "bc"), entry_id("ab", "c"));
    }

    #[test]
    fn keys_follow_r_lim_1() {
        assert!(parse_key(&Arg::Str("k".repeat(1024))).is_ok());
        assert_eq!(parse_key(&Arg::Str("k".repeat(1025))).unwrap_err().code, InvalidInput);
        // 1024 bytes made of 2-byte characters passes, 1026 fails.
        assert!(parse_key(&Arg::Str("é".repeat(512))).is_ok());
        assert!(parse_key(&Arg::Str("é".repeat(513))).is_err());
        assert!(parse_key(&Arg::str("")).is_err());
        assert!(parse_key(&Arg::str("a\0b")).is_err());
        assert!(parse_key(&Arg::InvalidStr).is_err());
        assert!(parse_key(&Arg::Number(1.0)).is_err());
        assert!(parse_key(&Arg::Undefined).is_err());
    }

    #[test]
    fn values_follow_r_lim_2() {
        assert_eq!(parse_value(Arg::Bytes(vec![])).unwrap(), Vec::<u8>::new());
        assert!(parse_value(Arg::Bytes(vec![0; MAX_VALUE_BYTES])).is_ok());
        assert!(parse_value(Arg::Bytes(vec![0; MAX_VALUE_BYTES + 1])).is_err());
        assert!(parse_value(Arg::OversizedBytes(usize::MAX)).unwrap_err().message.contains(&usize::MAX.to_string()));
        assert!(parse_value(Arg::str("text")).is_err());
        assert!(parse_value(Arg::Other("an ArrayBuffer")).is_err());
    }

    #[test]
    fn categories_are_upper_case_only() {
        // R-CAT-1
        assert_eq!(parse_category(&Arg::str("CACHE")).unwrap(), Category::Cache);
        for bad in ["cache", "Cache", "PREFERENCES", ""] {
            assert_eq!(parse_category(&Arg::str(bad)).unwrap_err().code, InvalidInput);
        }
        assert_eq!(parse_optional_category(&Arg::Null).unwrap(), None);
        assert_eq!(parse_optional_category(&Arg::Undefined).unwrap(), None);
    }

    #[test]
    fn access_policies_need_exactly_three_known_fields() {
        // R-ACC-2
        let good = obj(&[
            ("readScope", Arg::str("ALL_GENES")),
            ("writeScope", Arg::str("CREATOR_GENE_ONLY")),
            ("sharePolicy", Arg::str("PRIVATE")),
        ]);
        assert_eq!(
            parse_access_policy(&good).unwrap(),
            Some(AccessPolicy { read_scope: Scope::AllGenes, write_scope: Scope::CreatorGeneOnly, share_policy: SharePolicy::Private })
        );
        assert_eq!(parse_access_policy(&Arg::Undefined).unwrap(), None);
        assert!(parse_access_policy(&Arg::Null).is_err());
        let missing = obj(&[("readScope", Arg::str("ALL_GENES")), ("writeScope", Arg::str("ALL_GENES"))]);
        assert!(parse_access_policy(&missing).is_err());
        let extra = match good.clone() {
            Arg::Object(mut f) => {
                f.push(("x".into(), Arg::Null));
                Arg::Object(f)
            }
            _ => unreachable!(),
        };
        assert!(parse_access_policy(&extra).unwrap_err().message.contains("unknown field"));
        let lower = obj(&[
            ("readScope", Arg::str("all_genes")),
            ("writeScope", Arg::str("ALL_GENES")),
            ("sharePolicy", Arg::str("PRIVATE")),
        ]);
        assert!(parse_access_policy(&lower).is_err());
    }

    #[test]
    fn retention_policies_follow_r_ret_5() {
        let r = |days: Arg, a: Arg, b: Arg| {
            parse_retention_arg(&obj(&[("maxRetentionDays", days), ("autoDeleteOnTermination", a), ("anonymizationSupported", b)]))
        };
        assert_eq!(
            r(Arg::Number(1.0), Arg::Bool(false), Arg::Bool(true)).unwrap(),
            RetentionArg::Policy(RetentionPolicy { max_retention_days: Some(1), auto_delete_on_termination: false, anonymization_supported: true })
        );
        assert!(r(Arg::Number(2147483647.0), Arg::Bool(false), Arg::Bool(false)).is_ok());
        assert!(r(Arg::Null, Arg::Bool(false), Arg::Bool(false)).is_ok());
        for bad in [0.0, -1.0, 2.5, 2147483648.0, f64::NAN, f64::INFINITY] {
            assert!(r(Arg::Number(bad), Arg::Bool(false), Arg::Bool(false)).is_err(), "{bad}");
        }
        assert!(r(Arg::Undefined, Arg::Bool(false), Arg::Bool(false)).is_err());
        assert!(r(Arg::Number(1.0), Arg::Null, Arg::Bool(false)).is_err());
        assert!(r(Arg::Number(1.0), Arg::Bool(false), Arg::Number(0.0)).is_err());
        assert_eq!(parse_retention_arg(&Arg::Undefined).unwrap(), RetentionArg::Omitted);
        assert_eq!(parse_retention_arg(&Arg::Null).unwrap(), RetentionArg::FollowAgent);
        assert!(parse_retention_arg(&obj(&[])).is_err());
    }

    #[test]
    fn filters_follow_r_api_3_and_r_lim_3() {
        let f = parse_filter(&obj(&[("limit", Arg::Number(1000.0)), ("category", Arg::Null), ("keyPrefix", Arg::Undefined)])).unwrap();
        assert_eq!(f.limit, 1000);
        assert_eq!(f.category, None);
        assert_eq!(parse_filter(&Arg::Null).unwrap().limit, 100);
        for bad in [0.0, 1001.0, 2.5, -1.0, f64::NAN] {
            assert!(parse_filter(&obj(&[("limit", Arg::Number(bad))])).is_err(), "{bad}");
        }
        assert!(parse_filter(&obj(&[("limit", Arg::str("10"))])).is_err());
        let e = parse_filter(&obj(&[("prefix", Arg::str("a"))])).unwrap_err();
        assert!(e.message.contains("unknown field \"prefix\""));
        assert!(parse_filter(&obj(&[("since", Arg::str("not a time"))])).is_err());
        assert!(parse_filter(&obj(&[("until", Arg::Number(5.0))])).is_err());
        assert!(parse_filter(&Arg::str("x")).is_err());
        assert_eq!(parse_filter(&obj(&[("since", Arg::str("1970-01-01T00:00:01Z"))])).unwrap().since, Some(1000));
    }

    #[test]
    fn agent_ids_gene_ids_and_domains() {
        for ok in ["a", "A-1", "3f2b6c1e-1111-4a4a-8b8b-000000000000", "my.agent_2", &"x".repeat(128)] {
            assert!(check_agent_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "-x", "../x", "a/b", "a\\b", "a b", "é", &"x".repeat(129), "a\0"] {
            assert!(check_agent_id(bad).is_err(), "{bad}");
        }
        assert!(is_valid_gene_id(&format!("v2:{}", "a".repeat(64))));
        assert!(!is_valid_gene_id(&format!("v2:{}", "A".repeat(64))));
        assert!(!is_valid_gene_id(&format!("v1:{}", "a".repeat(64))));
        assert!(!is_valid_gene_id(&format!("v2:{}", "a".repeat(63))));
        for ok in ["text", "text.format", "a1.b2.c3"] {
            assert!(check_domain(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Text", "text.", ".text", "a..b", "a-b", "a b"] {
            assert!(check_domain(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn data_policies() {
        assert_eq!(parse_data_policy(&Arg::Undefined).unwrap(), DataPolicy::default());
        let p = parse_data_policy(&obj(&[("anonymizationSupported", Arg::Bool(true)), ("maxRetentionDays", Arg::Number(7.0))])).unwrap();
        assert_eq!(p, DataPolicy { anonymization_supported: true, max_retention_days: Some(7) });
        assert!(parse_data_policy(&obj(&[("maxRetentionDays", Arg::Number(0.0))])).is_err());
        assert!(parse_data_policy(&obj(&[("other", Arg::Bool(true))])).is_err());
    }
}
