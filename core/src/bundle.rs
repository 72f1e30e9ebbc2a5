//! Moving an agent's memory to another binding (R-MIG): the bundle format, its checks, and the
//! import transaction.
//!
//! A bundle is JSON Lines. Line 1 is the header (`format`, `version`, `agentId`, `exportedAt`,
//! `dataPolicy`, `counts`, `entriesSha256`); every further line is one live entry: the
//! `MemoryEntry` fields (value in base64) plus `creatorDomain`. `entriesSha256` is the SHA-256 of
//! every byte after the header line, so a truncated or edited bundle is refused whole.
//!
//! Import checks everything before it changes anything: the header, the checksum, every entry
//! (with the validation of a write, `model`), the target's data policy, key conflicts and the
//! target's quota (no eviction). Then all entries land in one write transaction of the store,
//! their audit lines appended before the commit (R-AUD-2), or none does.

use crate::access::{data_policy_violation, unsupported_scope};
use crate::arg::Arg;
use crate::storage::audit::{escape_line_separators, Action, Actor, Subject};
use crate::error::{MemoryError, Result};
use crate::storage::files::{create_private_file, Layout};
use crate::model::*;
use crate::storage::store::{expires_at, load_entry, read_agent, AgentStore, IfMissing, StoredEntry, Tx, ENTRY_COLUMNS};
use crate::time::{format_ms, parse_rfc3339_ceil_ms};
use crate::wasm::{decode_value, json_kind, EntryJson, JsonArg};

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "rotifer-memory-bundle";
pub const VERSION: u32 = 1;

const HEADER_FIELDS: [&str; 7] = ["format", "version", "agentId", "exportedAt", "dataPolicy", "counts", "entriesSha256"];
const ENTRY_FIELDS: [&str; 11] = [
    "entryId",
    "category",
    "key",
    "value",
    "createdBy",
    "lastAccessedBy",
    "createdAt",
    "updatedAt",
    "accessPolicy",
    "retentionPolicy",
    "creatorDomain",
];
/// The categories in the order `counts` lists them.
const COUNT_ORDER: [Category; 4] = [Category::Preference, Category::Pattern, Category::Context, Category::Cache];

// ---------------------------------------------------------------------------------------------
// Export (R-MIG-2)

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeaderJson<'a> {
    format: &'static str,
    version: u32,
    agent_id: &'a str,
    exported_at: String,
    data_policy: DataPolicyJson,
    counts: CountsJson,
    entries_sha256: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DataPolicyJson {
    anonymization_supported: bool,
    max_retention_days: Option<i64>,
}

#[derive(Serialize)]
#[allow(non_snake_case)]
struct CountsJson {
    PREFERENCE: u64,
    PATTERN: u64,
    CONTEXT: u64,
    CACHE: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryLine<'a> {
    #[serde(flatten)]
    entry: EntryJson<'a>,
    creator_domain: Option<&'a str>,
}

/// An exported bundle and what it holds.
#[derive(Debug, Clone)]
pub struct Exported {
    pub bytes: Vec<u8>,
    /// Entries per category, in `COUNT_ORDER`.
    pub counts: [(Category, u64); 4],
}

/// A bundle being made: entry lines added oldest first, the header written last (it holds their
/// counts and checksum). One implementation for every binding.
pub struct Encoder {
    lines: Vec<u8>,
    counts: [(Category, u64); 4],
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder { lines: Vec::new(), counts: COUNT_ORDER.map(|c| (c, 0u64)) }
    }
}

impl Encoder {
    pub fn push(&mut self, entry: &Entry, creator_domain: Option<&str>) -> Result<()> {
        let line = EntryLine { entry: EntryJson::from(entry), creator_domain };
        let start = self.lines.len();
        serde_json::to_writer(&mut self.lines, &line).map_err(|err| MemoryError::storage(format!("cannot encode an entry: {err}")))?;
        // As in the audit log: no key splits a line for readers that end lines at U+2028.
        escape_line_separators(&mut self.lines, start);
        self.lines.push(b'\n');
        if let Some(c) = self.counts.iter_mut().find(|(c, _)| *c == entry.category) {
            c.1 += 1;
        }
        Ok(())
    }

    /// The `entriesSha256` of the lines pushed so far.
    pub fn entries_sha256(&self) -> String {
        hex(&Sha256::digest(&self.lines))
    }

    pub fn finish(self, agent_id: &str, policy: &DataPolicy, now: i64) -> Result<Exported> {
        let get = |cat: Category| self.counts.iter().find(|(c, _)| *c == cat).map_or(0, |c| c.1);
        let header = HeaderJson {
            format: FORMAT,
            version: VERSION,
            agent_id,
            exported_at: format_ms(now),
            data_policy: DataPolicyJson { anonymization_supported: policy.anonymization_supported, max_retention_days: policy.max_retention_days },
            counts: CountsJson {
                PREFERENCE: get(Category::Preference),
                PATTERN: get(Category::Pattern),
                CONTEXT: get(Category::Context),
                CACHE: get(Category::Cache),
            },
            entries_sha256: hex(&Sha256::digest(&self.lines)),
        };
        let mut bytes = serde_json::to_vec(&header).map_err(|e| MemoryError::storage(format!("cannot encode the header: {e}")))?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&self.lines);
        Ok(Exported { bytes, counts: self.counts })
    }
}

/// The bundle of the agent's memory on its SQLite file (`transfer::export_agent_memory_of`).
pub fn export_agent_memory(layout: &Layout, agent_id: &str, include_cache: bool, now: i64) -> Result<Exported> {
    let store = AgentStore::open(layout, agent_id, IfMissing::Skip)?.ok_or_else(|| {
        MemoryError::not_found(format!("agent {agent_id:?} has no memory in {}: there is nothing to export", layout.root.display()))
    })?;
    store.read_only(|conn| {
        let tx = conn.unchecked_transaction()?;
        let exported = export_from(&tx, agent_id, include_cache, now)?;
        tx.finish()?;
        Ok(exported)
    })
}

/// The bundle of what `conn` sees (one snapshot when it is in a transaction), at `now`.
pub fn export_from(
    conn: &rusqlite::Connection,
    agent_id: &str,
    include_cache: bool,
    now: i64,
) -> Result<Exported> {
    let agent = read_agent(conn)?;
    let mut encoder = Encoder::default();
    let sql = format!("SELECT {ENTRY_COLUMNS} FROM entries WHERE (expires_at IS NULL OR expires_at > ?1) AND (?2 OR category != ?3) ORDER BY updated_at, seq");
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(rusqlite::params![
        now,
        include_cache,
        Category::Cache as i64
    ])?;
    while let Some(row) = rows.next()? {
        let e = StoredEntry::from_row(row)?;
        encoder.push(&e.entry, e.creator_domain.as_deref())?;
    }
    encoder.finish(agent_id, &agent.policy, now)
}

/// Writes a bundle to `path` the way a database file is made: under a temporary name in the
/// same folder (0600, never through a link), flushed to disk, then renamed over `path`. A
/// reader never sees half a bundle; a failure leaves `path` as it was.
pub fn write_bundle_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().ok_or_else(|| MemoryError::invalid(format!("output {:?} names no file", path.display().to_string())))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp: PathBuf = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), crate::storage::store::unique_suffix()));
    let fail = |what: &str, e: std::io::Error| MemoryError::storage(format!("cannot write the bundle {} ({what}: {e}); nothing was written", path.display()));
    let written = (|| -> Result<()> {
        let mut file = create_private_file(&tmp).map_err(|e| fail("create", e))?;
        file.write_all(bytes).map_err(|e| fail("write", e))?;
        file.sync_all().map_err(|e| fail("sync", e))?;
        std::fs::rename(&tmp, path).map_err(|e| fail("rename", e))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `includeCache` of `exportAgentMemory`: a boolean, default `false`.
pub fn parse_include_cache(arg: Option<&Arg>) -> Result<bool> {
    match arg {
        None | Some(Arg::Undefined) | Some(Arg::Null) => Ok(false),
        Some(Arg::Bool(b)) => Ok(*b),
        Some(other) => Err(MemoryError::invalid(format!("includeCache must be a boolean, not {}", other.kind()))),
    }
}

/// `output` of `exportAgentMemory`: a file path, or absent.
pub fn parse_output(arg: Option<&Arg>) -> Result<Option<PathBuf>> {
    match arg {
        None | Some(Arg::Undefined) | Some(Arg::Null) => Ok(None),
        Some(Arg::Str(s)) if !s.is_empty() && !s.contains('\0') => Ok(Some(PathBuf::from(s))),
        Some(other) => Err(MemoryError::invalid(format!("output must be a file path, not {}", if matches!(other, Arg::Str(_)) { "an empty string" } else { other.kind() }))),
    }
}

/// The `bundle` given to `importAgentMemory`: its bytes, or what it was instead.
pub fn bundle_bytes(given: std::result::Result<Vec<u8>, Arg>) -> Result<Vec<u8>> {
    given.map_err(|other| {
        MemoryError::invalid(format!(
            "bundle must be the bundle's bytes (a Uint8Array or Buffer, e.g. fs.readFileSync(file)) or its text, not {}",
            other.kind()
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// Reading a bundle (R-MIG-3: everything is checked before anything changes)

/// What import does with a key the target has already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnConflict {
    /// Refuse the whole import.
    #[default]
    Fail,
    /// Keep the target's entry, import the others.
    Skip,
    /// Replace the target's entry with the bundle's.
    Replace,
}

impl OnConflict {
    pub fn parse(arg: &Arg) -> Result<OnConflict> {
        match arg {
            Arg::Undefined | Arg::Null => Ok(OnConflict::Fail),
            Arg::Str(s) if s == "fail" => Ok(OnConflict::Fail),
            Arg::Str(s) if s == "skip" => Ok(OnConflict::Skip),
            Arg::Str(s) if s == "replace" => Ok(OnConflict::Replace),
            Arg::Str(s) => Err(MemoryError::invalid(format!("onConflict {s:?} is unknown; use \"fail\" (the default), \"skip\" or \"replace\""))),
            other => Err(MemoryError::invalid(format!("onConflict must be \"fail\", \"skip\" or \"replace\", not {}", other.kind()))),
        }
    }
}

/// A bundle's header, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub agent_id: String,
    pub exported_at: i64,
    pub data_policy: DataPolicy,
    pub counts: [(Category, u64); 4],
}

/// One entry of a bundle, checked, with the line it came from.
#[derive(Debug, Clone)]
pub struct BundleEntry {
    pub line: usize,
    pub entry: Entry,
    pub creator_domain: Option<String>,
}

/// A bundle whose header, checksum and entries passed every check that does not depend on the
/// target.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub header: Header,
    pub entries: Vec<BundleEntry>,
}

fn at_line(line: usize, what: impl std::fmt::Display) -> MemoryError {
    MemoryError::invalid(format!("bundle line {line}: {what}; nothing was imported"))
}

fn json_object(line: usize, bytes: &[u8], what: &str) -> Result<Vec<(String, Arg)>> {
    match serde_json::from_slice::<JsonArg>(bytes) {
        Ok(JsonArg(Arg::Object(fields))) => Ok(fields),
        Ok(JsonArg(other)) => Err(at_line(line, format!("{what} must be a JSON object, not {}", json_kind(&other)))),
        Err(e) => Err(at_line(line, format!("{what} is not valid JSON ({e})"))),
    }
}

/// Parses and checks a bundle: header, checksum, and every entry on its own (key, value,
/// category, policies, creator, times), with the validation every write uses.
pub fn parse_bundle(bytes: &[u8]) -> Result<Bundle> {
    let Some(header_end) = bytes.iter().position(|b| *b == b'\n') else {
        return Err(if bytes.is_empty() {
            MemoryError::invalid("the bundle is empty; export one with `rotifer agent memory export`; nothing was imported")
        } else {
            at_line(1, "the header line has no end (the bundle is truncated)")
        });
    };
    let header = parse_header(&bytes[..header_end])?;
    let body = &bytes[header_end + 1..];
    let expected: u64 = header.0.counts.iter().map(|c| c.1).sum();
    // Say how it is damaged where that can be told: cut short, then edited.
    let lines = body.split(|b| *b == b'\n').count() as u64 - 1; // complete lines
    if !body.is_empty() && !body.ends_with(b"\n") {
        return Err(at_line(
            lines as usize + 2,
            format!("the line has no end: the bundle is truncated (the header counts {expected} entries)"),
        ));
    }
    if lines != expected {
        return Err(at_line(
            lines.min(expected) as usize + 2,
            if lines < expected {
                format!("the bundle ends after {lines} entries, and its header counts {expected}: it is truncated")
            } else {
                format!("the bundle has {lines} entries, and its header counts {expected}: it was edited")
            },
        ));
    }
    if hex(&Sha256::digest(body)) != header.1 {
        // Name the first line that no longer reads as an entry, where one does not.
        let first_bad = body.split(|b| *b == b'\n').take(lines as usize).enumerate().find_map(|(i, text)| parse_entry(i + 2, text, &header.0.agent_id).err());
        let mismatch = "the entries do not match the header's entriesSha256: the bundle was edited or damaged after export; export it again; nothing was imported";
        return Err(match first_bad {
            Some(e) => MemoryError::invalid(format!("{}; {mismatch}", e.message.trim_end_matches("; nothing was imported"))),
            None => MemoryError::invalid(format!("bundle lines 2 to {}: {mismatch}", lines + 1)),
        });
    }
    let mut entries = Vec::with_capacity(expected as usize);
    let mut keys = HashSet::new();
    let mut counts = COUNT_ORDER.map(|c| (c, 0u64));
    for (i, text) in body.split(|b| *b == b'\n').take(lines as usize).enumerate() {
        let line = i + 2;
        let e = parse_entry(line, text, &header.0.agent_id)?;
        if !keys.insert(e.entry.key.clone()) {
            return Err(at_line(line, format!("the key {:?} appears a second time", e.entry.key)));
        }
        if let Some(c) = counts.iter_mut().find(|(c, _)| *c == e.entry.category) {
            c.1 += 1;
        }
        entries.push(e);
    }
    if counts != header.0.counts {
        return Err(at_line(1, "the header's counts do not match the entries"));
    }
    Ok(Bundle { header: header.0, entries })
}

/// The header and its `entriesSha256`.
fn parse_header(bytes: &[u8]) -> Result<(Header, String)> {
    let fields = json_object(1, bytes, "the header")?;
    // The format and version first: a newer bundle may have other fields.
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    if field("format") != Some(&Arg::str(FORMAT)) {
        return Err(at_line(1, format!("this is not a rotifer memory bundle (the header's \"format\" is not {FORMAT:?})")));
    }
    match field("version") {
        Some(Arg::Number(v)) if *v == VERSION as f64 => {}
        Some(Arg::Number(v)) if v.fract() == 0.0 && *v > VERSION as f64 => {
            return Err(at_line(1, format!("the bundle has format version {v}, made by a newer rotifer-memory; this version reads version {VERSION}: upgrade it")))
        }
        _ => return Err(at_line(1, format!("the header's \"version\" must be {VERSION}"))),
    }
    let v = exact_fields("the header", &fields, &HEADER_FIELDS).map_err(|e| at_line(1, e.message))?;
    let agent_id = match v[2] {
        Arg::Str(s) => {
            check_agent_id(s).map_err(|e| at_line(1, e.message))?;
            s.clone()
        }
        other => return Err(at_line(1, format!("agentId must be a string, not {}", json_kind(other)))),
    };
    let exported_at = parse_time(1, "exportedAt", v[3])?;
    let data_policy = match v[4] {
        Arg::Object(f) => {
            let p = exact_fields("dataPolicy", f, &["anonymizationSupported", "maxRetentionDays"]).map_err(|e| at_line(1, e.message))?;
            if !matches!(p[0], Arg::Bool(_)) {
                return Err(at_line(1, "dataPolicy.anonymizationSupported must be a boolean"));
            }
            parse_data_policy(v[4]).map_err(|e| at_line(1, e.message))?
        }
        other => return Err(at_line(1, format!("dataPolicy must be an object, not {}", json_kind(other)))),
    };
    let counts = match v[5] {
        Arg::Object(f) => {
            let names = COUNT_ORDER.map(Category::as_str);
            let c = exact_fields("counts", f, &names).map_err(|e| at_line(1, e.message))?;
            let mut counts = COUNT_ORDER.map(|c| (c, 0u64));
            for (i, n) in c.iter().enumerate() {
                match n {
                    Arg::Number(n) if n.fract() == 0.0 && *n >= 0.0 && *n <= 1e15 => counts[i].1 = *n as u64,
                    _ => return Err(at_line(1, format!("counts.{} must be a whole number", names[i]))),
                }
            }
            counts
        }
        other => return Err(at_line(1, format!("counts must be an object, not {}", json_kind(other)))),
    };
    let sha = match v[6] {
        Arg::Str(s) if s.len() == 64 && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) => s.clone(),
        _ => return Err(at_line(1, "entriesSha256 must be 64 lower-case hex digits")),
    };
    Ok((Header { agent_id, exported_at, data_policy, counts }, sha))
}

/// A time exactly as the store writes it: RFC 3339, milliseconds, `Z`.
fn parse_time(line: usize, field: &str, arg: &Arg) -> Result<i64> {
    let bad = || at_line(line, format!("{field} must be an RFC 3339 UTC time with milliseconds, like 2026-11-30T01:38:19.123Z"));
    match arg {
        Arg::Str(s) => {
            let ms = parse_rfc3339_ceil_ms(field, s).map_err(|_| bad())?;
            if ms < 0 || format_ms(ms) != *s {
                return Err(bad());
            }
            Ok(ms)
        }
        _ => Err(bad()),
    }
}

fn gene_id(line: usize, field: &str, arg: &Arg) -> Result<String> {
    match arg {
        Arg::Str(s) if is_valid_gene_id(s) => Ok(s.clone()),
        _ => Err(at_line(line, format!("{field} must be a v2 gene id (v2: followed by 64 lower-case hex digits)"))),
    }
}

/// One entry line, with the checks of a write (R-LIM, R-CAT-1, R-ACC-2, R-RET-5, R-ACC-6).
fn parse_entry(line: usize, bytes: &[u8], source_agent: &str) -> Result<BundleEntry> {
    let fields = json_object(line, bytes, "the entry")?;
    let v = exact_fields("the entry", &fields, &ENTRY_FIELDS).map_err(|e| at_line(line, e.message))?;
    let key = parse_key(v[2]).map_err(|e| at_line(line, e.message))?;
    let within = |e: MemoryError| MemoryError::new(e.code, format!("bundle line {line} (key {key:?}): {}; nothing was imported", e.message));
    if v[0] != &Arg::Str(entry_id(source_agent, &key)) {
        return Err(within(MemoryError::invalid("entryId is not the one of this key in the bundle's agent")));
    }
    let category = parse_category(v[1]).map_err(within)?;
    let value = parse_value(decode_value(v[3].clone()).map_err(within)?).map_err(within)?;
    let created_by = gene_id(line, "createdBy", v[4])?;
    gene_id(line, "lastAccessedBy", v[5])?;
    let created_at = parse_time(line, "createdAt", v[6])?;
    let updated_at = parse_time(line, "updatedAt", v[7])?;
    if updated_at < created_at {
        return Err(within(MemoryError::invalid("updatedAt is before createdAt")));
    }
    let access_policy = match parse_access_policy(v[8]).map_err(within)? {
        Some(p) => p,
        None => return Err(within(MemoryError::invalid("accessPolicy is missing"))),
    };
    if let Some(reason) = unsupported_scope(&access_policy) {
        return Err(within(MemoryError::denied(reason)));
    }
    let retention_policy = match parse_retention_arg(v[9]).map_err(within)? {
        RetentionArg::Policy(p) => Some(p),
        RetentionArg::FollowAgent => None,
        RetentionArg::Omitted => return Err(within(MemoryError::invalid("retentionPolicy is missing"))),
    };
    let creator_domain = match v[10] {
        Arg::Null => None,
        Arg::Str(d) => {
            check_domain(d).map_err(within)?;
            Some(d.clone())
        }
        other => return Err(within(MemoryError::invalid(format!("creatorDomain must be a domain or null, not {}", json_kind(other))))),
    };
    Ok(BundleEntry {
        line,
        entry: Entry {
            entry_id: String::new(), // recomputed for the target agent
            category,
            key,
            value,
            last_accessed_by: created_by.clone(),
            created_by,
            created_at,
            updated_at,
            access_policy,
            retention_policy,
        },
        creator_domain,
    })
}

// ---------------------------------------------------------------------------------------------
// Import (R-MIG-3)

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Imported {
    pub created: u64,
    pub updated: u64,
    /// Keys the target had already, kept (`OnConflict::Skip`).
    pub skipped: u64,
    /// Entries that expired, by the target's rules, between export and import: left out.
    pub expired: u64,
}

/// The target of an import as it is when the import is planned: its limits, what it holds, and
/// the size of each key of the bundle it has already.
pub struct Target<'a> {
    pub policy: DataPolicy,
    pub quota: u64,
    pub used: u64,
    pub now: i64,
    pub existing: &'a dyn Fn(&str) -> Result<Option<u64>>,
}

/// One entry an import writes: the bundle's entry, whether it replaces one, its size.
pub struct Planned<'b> {
    pub from: &'b BundleEntry,
    pub replaces: bool,
    pub size: u64,
}

/// What an import of `bundle` into `target` does, decided before anything changes (R-MIG-3): the
/// entries to write, the bytes the target then holds, and the report; or the refusal, naming the
/// line. The same decision on every binding.
pub fn plan_import<'b>(bundle: &'b Bundle, target: &Target<'_>, on_conflict: OnConflict) -> Result<(Vec<Planned<'b>>, u64, Imported)> {
    let mut plan = Vec::with_capacity(bundle.entries.len());
    let mut report = Imported::default();
    let mut used = target.used;
    for b in &bundle.entries {
        let e = &b.entry;
        let at = |code: crate::ErrorCode, what: String| MemoryError::new(code, format!("bundle line {} (key {:?}): {what}; nothing was imported", b.line, e.key));
        for (field, ms) in [("createdAt", e.created_at), ("updatedAt", e.updated_at)] {
            crate::time::check_not_future(ms, target.now).map_err(|what| at(crate::ErrorCode::InvalidInput, format!("{field} {what}")))?;
        }
        if let Some(reason) = data_policy_violation(&target.policy, &e.access_policy, e.retention_policy.as_ref()) {
            return Err(at(crate::ErrorCode::AccessDenied, format!("the target agent's data policy refuses it: {reason}")));
        }
        if expires_at(e.updated_at, e.retention_policy.as_ref(), &target.policy).is_some_and(|t| t <= target.now) {
            report.expired += 1;
            continue;
        }
        let existing = (target.existing)(&e.key)?;
        if let Some(old_size) = existing {
            match on_conflict {
                OnConflict::Fail => {
                    return Err(at(
                        crate::ErrorCode::InvalidInput,
                        "the target agent has this key already; import with onConflict \"skip\" (keep the target's) or \"replace\" (take the bundle's)".into(),
                    ))
                }
                OnConflict::Skip => {
                    report.skipped += 1;
                    continue;
                }
                OnConflict::Replace => used = used.saturating_sub(old_size),
            }
        }
        let size = e.size();
        used += size;
        if used > target.quota {
            return Err(at(
                crate::ErrorCode::QuotaExceeded,
                format!(
                    "with this entry the target would hold {used} bytes, over its quota of {} bytes (import evicts nothing); raise the quota or delete entries first",
                    target.quota
                ),
            ));
        }
        if existing.is_some() {
            report.updated += 1;
        } else {
            report.created += 1;
        }
        plan.push(Planned { from: b, replaces: existing.is_some(), size });
    }
    Ok((plan, used, report))
}

/// Imports `bytes` into the agent's SQLite file (`transfer::import_agent_memory_of`).
pub fn import_agent_memory(layout: &Layout, agent_id: &str, bytes: &[u8], on_conflict: OnConflict, now: impl Into<crate::time::CallTime>) -> Result<Imported> {
    check_agent_id(agent_id)?;
    let bundle = parse_bundle(bytes)?;
    let store = AgentStore::open(layout, agent_id, IfMissing::Create)?
        .ok_or_else(|| MemoryError::storage("memory could not be opened"))?;
    store.write(now, |tx| import_into(tx, agent_id, &bundle, on_conflict))
}

/// The import of a checked `bundle` within the write transaction `tx` of the agent's store: the
/// plan, then every entry with its audit line.
pub fn import_into(tx: &mut Tx<'_, '_>, agent_id: &str, bundle: &Bundle, on_conflict: OnConflict) -> Result<Imported> {
    let existing = |key: &str| Ok(load_entry(tx.conn, key)?.map(|old| old.size));
    let target = Target { policy: tx.agent.policy, quota: tx.agent.quota, used: tx.agent.used, now: tx.now, existing: &existing };
    let (plan, used, report) = plan_import(bundle, &target, on_conflict)?;
    for p in plan {
        let e = &p.from.entry;
        let action = if p.replaces { Action::Update } else { Action::Create };
        tx.batch.record(action, Actor::Deployer, Subject { key: Some(&e.key), category: Some(e.category), size: Some(p.size) }, None);
        let seq = tx.next_seq();
        let stored = StoredEntry {
            entry: Entry { entry_id: entry_id(agent_id, &e.key), ..e.clone() },
            size: p.size,
            seq,
            creator_domain: p.from.creator_domain.clone(),
        };
        tx.put_entry(&stored, p.replaces)?;
    }
    tx.set_used(used);
    Ok(report)
}
