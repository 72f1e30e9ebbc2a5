//! The audit log as a whole (R-AUD-6, R-AUD-7): an agent's lines in every file, oldest first,
//! and whether each change line committed.
//!
//! The rule (README "Audit and telemetry", which any reader of the files can apply by itself):
//! a change line of agent A with `"tx": S` committed iff S <= A's `last_seq` now AND no later
//! attempt of A at S begins after it (a line of A with `"tx": S, "txLine": 1`). Attempts at S
//! are serialised under A's write lock and each is one `write` of contiguous lines, its first
//! change line `txLine` 1; a failed attempt leaves `last_seq` below S, so the next one reuses
//! S. Lines without `tx` (refusals, lines of versions before R-AUD-6) count as committed. An
//! agent whose database does not exist is judged by its lines alone: the last attempt at each
//! S counts as committed.

use crate::binding::{Agent, Binding};
use crate::error::{MemoryError, Result};
use crate::postgres::deployer::AuditRows;
use crate::storage::audit::head;
use crate::storage::files::Layout;
use crate::storage::logs::{is_kept_header, kept_path, open_files};
use crate::storage::store::{read_agent, AgentStore, IfMissing};
use rusqlite::{Transaction, TransactionBehavior};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};

// ---------------------------------------------------------------------------------------------
// The commit judgement (R-AUD-6)

/// What a line says of its transaction: `tx`, and `txLine` (1 for an attempt's first change line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxMark {
    pub tx: Option<i64>,
    pub tx_line: Option<u64>,
}

/// Whether each of one agent's lines (in log order) committed, given its `last_seq` (`None`: no
/// database). See the module's doc for the rule. Lines with a `tx` but no `txLine` (written by the
/// version that added `tx`) make one attempt of each run of lines with the same `tx`.
pub fn judge(marks: &[TxMark], last_seq: Option<i64>) -> Vec<bool> {
    let starts: Vec<bool> = marks
        .iter()
        .enumerate()
        .map(|(i, m)| match (m.tx, m.tx_line) {
            (None, _) => false,
            (Some(_), Some(n)) => n == 1,
            (Some(tx), None) => i == 0 || marks[i - 1] != TxMark { tx: Some(tx), tx_line: None },
        })
        .collect();
    let mut retried: HashSet<i64> = HashSet::new();
    let mut committed = vec![true; marks.len()];
    for i in (0..marks.len()).rev() {
        if let Some(s) = marks[i].tx {
            committed[i] = !retried.contains(&s) && last_seq.is_none_or(|l| s <= l);
            if starts[i] {
                retried.insert(s);
            }
        }
    }
    committed
}

/// One agent's audit lines, judged.
#[derive(Debug)]
pub struct AgentLog {
    /// Each line as written, with `"committed": true|false` added as its last field.
    pub lines: Vec<String>,
    /// How many lines of the files (any agent's) are not whole audit lines.
    pub skipped: u64,
    /// The agent's `last_seq`, `None` if it has no database.
    pub last_seq: Option<i64>,
}

/// The lines of `agent_id` in every audit file of `layout`, oldest first, each marked committed
/// or not (R-AUD-6, R-AUD-7): all of a `LogReader`'s lines at once.
pub fn read_agent_log(layout: &Layout, agent_id: &str) -> Result<AgentLog> {
    read_log(LogReader::open(layout, agent_id, false)?)
}

/// `read_agent_log` on the agent's binding (R-BIND-3: on PostgreSQL its audit rows, in order).
pub fn read_agent_log_of(agent: &Agent) -> Result<AgentLog> {
    read_log(LogReader::of(agent, false)?)
}

fn read_log(mut reader: LogReader) -> Result<AgentLog> {
    let mut lines = Vec::with_capacity(reader.len());
    while reader.next_lines(usize::MAX, |line| lines.push(String::from_utf8_lossy(line).into_owned()))? > 0 {}
    Ok(AgentLog { lines, skipped: reader.skipped, last_seq: reader.last_seq })
}

// ---------------------------------------------------------------------------------------------
// Reading page by page, and following (R-AUD-6, R-AUD-7)

/// Where one of the agent's lines is: the file (index into `LogReader::files`) and its bytes.
#[derive(Debug, Clone, Copy)]
struct Span {
    file: usize,
    offset: u64,
    len: u32,
}

/// An audit file as the reader knows it: opened once, read up to `read_to`.
struct LogFile {
    file: File,
    /// Device and inode: a rotated file keeps them under its new name.
    id: (u64, u64),
    read_to: u64,
}

/// An agent's audit lines, oldest first, judged committed or not, handed out a page at a time;
/// and, when following, the lines appended (in any file, across rotations) since.
///
/// `open` reads every file once, keeping only where the agent's lines are and what the
/// judgement needs (`tx`, `txLine`), under the agent's write lock as `read_agent_log` describes:
/// every line read belongs to an attempt that had committed or failed for good. The pages then
/// read those bytes again, through the descriptors opened then: what a page shows is what was
/// judged, however the files rotate meanwhile.
///
/// `poll` (when following) looks for new lines, the same way: first one `stat` of the log, and
/// only if it grew or was rotated the agent's write lock, the files again (each known file from
/// where it was left, by inode; new ones from their start) and a judgement of all the lines
/// read so far. A line judged earlier is not judged again once handed out, and when following
/// is let go at the next look (memory stays bounded however long one follows). When following, a
/// file's last bytes that do not end with a newline are left for the next look (an append of
/// another agent in progress), never counted as skipped.
pub struct LogReader {
    agent_id: String,
    layout: Layout,
    follow: bool,
    files: Vec<LogFile>,
    spans: Vec<Span>,
    marks: Vec<TxMark>,
    committed: Vec<bool>,
    next: usize,
    /// Lines handed out and let go (when following: see `look`).
    dropped: usize,
    /// The agent's lines read so far, by action, in the order the actions first came.
    pub actions: Vec<(String, u64)>,
    /// How many lines of the files read (any agent's) are not whole audit lines.
    pub skipped: u64,
    /// The agent's `last_seq` at the last look, `None` if it had no database.
    pub last_seq: Option<i64>,
    /// On PostgreSQL: the agent's audit rows (R-BIND-3), read by `id` instead of the files.
    rows: Option<AuditRows>,
}

/// What one read of a file fetches at least (lines of other agents between ours come with it).
const WINDOW: u64 = 1 << 18;

impl LogReader {
    /// Reads where every line of `agent_id` is, and judges them; see the type's doc.
    pub fn open(layout: &Layout, agent_id: &str, follow: bool) -> Result<LogReader> {
        crate::model::check_agent_id(agent_id)?;
        let mut r = LogReader {
            agent_id: agent_id.to_string(),
            layout: layout.clone(),
            follow,
            files: Vec::new(),
            spans: Vec::new(),
            marks: Vec::new(),
            committed: Vec::new(),
            next: 0,
            dropped: 0,
            actions: Vec::new(),
            skipped: 0,
            last_seq: None,
            rows: None,
        };
        r.look()?;
        Ok(r)
    }

    /// `open` on the agent's binding. On PostgreSQL the lines are its audit rows in order, of the
    /// file's shape, every one committed (R-BIND-3); `last_seq` is the agent's transaction
    /// counter, `skipped` always 0; following polls for rows past the last one counted, and
    /// holds nothing but that position (rows trimmed by the bound before they were handed out
    /// are not shown; the trim's own row is).
    pub fn of(agent: &Agent, follow: bool) -> Result<LogReader> {
        let Binding::Postgres(pool) = &agent.binding else { return LogReader::open(&agent.layout, &agent.agent_id, follow) };
        crate::model::check_agent_id(&agent.agent_id)?;
        let mut r = LogReader {
            agent_id: agent.agent_id.clone(),
            layout: agent.layout.clone(),
            follow,
            files: Vec::new(),
            spans: Vec::new(),
            marks: Vec::new(),
            committed: Vec::new(),
            next: 0,
            dropped: 0,
            actions: Vec::new(),
            skipped: 0,
            last_seq: None,
            rows: Some(AuditRows::open(pool.clone(), &agent.agent_id)),
        };
        r.look_rows()?;
        Ok(r)
    }

    fn look_rows(&mut self) -> Result<usize> {
        let Some(rows) = self.rows.as_mut() else { return Ok(0) };
        let (new, last_tx) = rows.look(&mut self.actions)?;
        self.last_seq = last_tx;
        Ok(new as usize)
    }

    /// How many of the agent's lines have been read (handed out or not).
    pub fn len(&self) -> usize {
        if let Some(rows) = &self.rows {
            return rows.seen as usize;
        }
        self.dropped + self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many lines are read but not handed out yet.
    pub fn remaining(&self) -> usize {
        if let Some(rows) = &self.rows {
            return rows.remaining() as usize;
        }
        self.spans.len() - self.next
    }

    /// Skips `n` lines not handed out yet (all that remain, if fewer).
    pub fn skip(&mut self, n: usize) {
        if let Some(rows) = self.rows.as_mut() {
            return rows.skip(n as u64);
        }
        self.next += n.min(self.remaining());
    }

    /// Hands out up to `max` lines not handed out yet, each as written with `"committed":
    /// true|false` added as its last field, to `each`; returns how many.
    pub fn next_lines(&mut self, max: usize, mut each: impl FnMut(&[u8])) -> Result<usize> {
        if let Some(rows) = self.rows.as_mut() {
            return rows.next_lines(max, &mut each);
        }
        let end = self.next + max.min(self.remaining());
        let mut buf: Vec<u8> = Vec::new();
        let mut line: Vec<u8> = Vec::new();
        // The bytes in `buf`: (file, first offset, end offset).
        let mut window: Option<(usize, u64, u64)> = None;
        for i in self.next..end {
            let s = self.spans[i];
            let (start, stop) = (s.offset, s.offset + u64::from(s.len));
            let inside = window.is_some_and(|(f, a, b)| f == s.file && start >= a && stop <= b);
            if !inside {
                let f = &self.files[s.file];
                let to = f.read_to.min(start + WINDOW).max(stop);
                buf.resize((to - start) as usize, 0);
                f.file.read_exact_at(&mut buf, start).map_err(|e| unreadable_file(&self.layout, e))?;
                window = Some((s.file, start, to));
            }
            let a = (start - window.map_or(0, |w| w.1)) as usize;
            let text = &buf[a..a + s.len as usize];
            // A whole audit line is a JSON object: it ends with `}`.
            line.clear();
            line.extend_from_slice(&text[..text.len() - 1]);
            line.extend_from_slice(if self.committed[i] { b",\"committed\":true}" } else { b",\"committed\":false}" });
            each(&line);
        }
        let n = end - self.next;
        self.next = end;
        Ok(n)
    }

    /// Whether the log may have new lines: it grew, or is another file than the one read last
    /// (rotated). One `stat`, no lock.
    fn may_have_grown(&self) -> bool {
        let Ok(m) = std::fs::symlink_metadata(self.layout.audit_path()) else { return false };
        match self.files.iter().find(|f| f.id == (m.dev(), m.ino())) {
            Some(f) => m.len() > f.read_to,
            None => true,
        }
    }

    /// When following: reads the lines appended since the last look, and judges every line
    /// not handed out yet again; returns how many new lines of the agent there are.
    pub fn poll(&mut self) -> Result<usize> {
        if self.rows.is_some() {
            return self.look_rows();
        }
        if !self.may_have_grown() {
            return Ok(0);
        }
        let before = self.len();
        self.look()?;
        Ok(self.len() - before)
    }

    /// The agent's `last_seq` and the files, under its write lock (see `read_agent_log`); then
    /// every byte of them not read yet.
    fn look(&mut self) -> Result<()> {
        if self.follow && self.next > 0 {
            // What was handed out is let go: a line's judgement depends only on the lines after
            // it (a later attempt at its tx), so a long follow holds only what is not shown yet.
            let n = self.next;
            self.spans.drain(..n);
            self.marks.drain(..n);
            self.committed.drain(..n);
            self.dropped += n;
            self.next = 0;
        }
        let path = self.layout.audit_path();
        let (last_seq, files) = match AgentStore::open(&self.layout, &self.agent_id, IfMissing::Skip)? {
            Some(store) => store.read_only(|conn| {
                // The write lock, only to wait for an attempt in progress; nothing is written.
                let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
                let agent = read_agent(&tx)?;
                let files = open_files(&path)?;
                drop(tx);
                Ok((Some(agent.last_seq), files))
            })?,
            None => (None, open_files(&path)?),
        };
        self.last_seq = last_seq;
        let first_look = self.files.is_empty();
        let kept = kept_path(&path);
        for (file_path, file, len) in files {
            let meta = file.metadata().map_err(|e| unreadable_file(&self.layout, e))?;
            let id = (meta.dev(), meta.ino());
            let at = match self.files.iter().position(|f| f.id == id) {
                Some(i) => i,
                None => {
                    // A kept file made since the first look holds only lines read already
                    // (those of the files it took in, or of the kept file before it).
                    let read_to = if !first_look && file_path == kept { len } else { 0 };
                    self.files.push(LogFile { file, id, read_to });
                    self.files.len() - 1
                }
            };
            self.scan(at, len, &file_path)?;
        }
        let judged = judge(&self.marks, self.last_seq);
        // Lines handed out keep the judgement they were shown with.
        self.committed.truncate(self.next);
        self.committed.extend_from_slice(&judged[self.next..]);
        Ok(())
    }

    /// Reads file `at` from where it was left up to `len`, keeping the agent's lines.
    fn scan(&mut self, at: usize, len: u64, path: &std::path::Path) -> Result<()> {
        let start = self.files[at].read_to;
        if len <= start {
            return Ok(());
        }
        let mut f = &self.files[at].file;
        f.seek(SeekFrom::Start(start)).map_err(|e| unreadable(path, e))?;
        let mut reader = BufReader::with_capacity(1 << 16, f.take(len - start));
        let mut line = Vec::new();
        let mut offset = start;
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).map_err(|e| unreadable(path, e))?;
            if n == 0 {
                break;
            }
            let whole = line.last() == Some(&b'\n');
            if !whole && self.follow {
                break; // an append in progress: the next look reads it whole
            }
            let trimmed = line.trim_ascii_end();
            if !trimmed.iter().all(u8::is_ascii_whitespace) && (offset != 0 || !is_kept_header(trimmed)) {
                match head(trimmed) {
                    None => self.skipped += 1,
                    Some(h) if h.agent_id == self.agent_id.as_str() => {
                        self.marks.push(TxMark { tx: h.tx, tx_line: h.tx_line });
                        self.spans.push(Span { file: at, offset, len: trimmed.len() as u32 });
                        match self.actions.iter_mut().find(|(a, _)| *a == h.action) {
                            Some((_, n)) => *n += 1,
                            None => self.actions.push((h.action.into_owned(), 1)),
                        }
                    }
                    Some(_) => {}
                }
            }
            offset += n as u64;
        }
        self.files[at].read_to = offset;
        Ok(())
    }
}

fn unreadable(path: &std::path::Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage(format!("cannot read the audit log {} ({e}); make it a readable regular file", path.display()))
}

fn unreadable_file(layout: &Layout, e: impl std::fmt::Display) -> MemoryError {
    unreadable(&layout.audit_path(), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(tx: Option<i64>, tx_line: Option<u64>) -> TxMark {
        TxMark { tx, tx_line }
    }

    #[test]
    fn r_aud_6_the_last_attempt_at_a_tx_is_the_one_that_may_have_committed() {
        let marks = [
            m(Some(1), Some(1)),
            m(Some(2), Some(1)), // attempt at 2 that failed (commit refused: disk full)
            m(Some(2), Some(2)),
            m(None, None), // a refusal
            m(Some(2), Some(1)), // the retry at 2, which committed
            m(Some(2), Some(2)),
            m(Some(3), Some(1)), // killed before its commit
        ];
        assert_eq!(judge(&marks, Some(2)), [true, false, false, true, true, true, false]);
        // No database: the lines alone, the last attempt at each tx counts.
        assert_eq!(judge(&marks, None), [true, false, false, true, true, true, true]);
    }

    #[test]
    fn r_aud_6_lines_without_tx_line_make_one_attempt_per_run() {
        let marks = [m(Some(1), None), m(Some(1), None), m(Some(2), None), m(Some(2), None)];
        assert_eq!(judge(&marks, Some(1)), [true, true, false, false]);
    }

    // -----------------------------------------------------------------------------------------
    // LogReader

    use crate::memory::GeneMemory;
    use crate::Arg;
    use std::io::Write;

    use crate::test_support::{gene, root, T0};
    fn write(g: &GeneMemory, key: &str, now: i64) {
        g.write(&Arg::Str(key.into()), Arg::Bytes(vec![1; 8]), &Arg::Str("CACHE".into()), &Arg::Undefined, &Arg::Undefined, now).unwrap();
    }
    fn drain(r: &mut LogReader, page: usize) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        while r.next_lines(page, |l| out.push(serde_json::from_slice(l).unwrap())).unwrap() > 0 {}
        out
    }
    fn keys(lines: &[serde_json::Value]) -> Vec<String> {
        lines.iter().map(|l| l["key"].as_str().unwrap_or("-").to_string()).collect()
    }

    #[test]
    fn r_aud_7_pages_hand_out_exactly_the_lines_of_read_agent_log() {
        let r = root("pages");
        let l = Layout::at(&r.0);
        // Small files, so that the agent's lines span rotated files too, between another agent's.
        std::fs::write(r.0.join("rotifer.json"), r#"{"audit":{"maxSize":"2KB","keep":50}}"#).unwrap();
        let (a, b) = (gene(&r, "a"), gene(&r, "b"));
        for i in 0..40 {
            write(&a, &format!("k{i:02}"), T0 + i);
            write(&b, &format!("other{i:02}"), T0 + i);
        }
        // A line that is not an audit line, and one of another agent cut short, at the end.
        let mut f = std::fs::OpenOptions::new().append(true).create(true).open(l.audit_path()).unwrap();
        f.write_all(b"not json\n{\"ts\":\"2026-").unwrap();
        drop(f);
        assert!(std::fs::read_dir(l.audit_path().parent().unwrap()).unwrap().flatten().any(|e| e.file_name() == "audit.3.jsonl"), "rotated");
        let whole = read_agent_log(&l, "a").unwrap();
        assert_eq!(whole.lines.len(), 40);
        assert_eq!(whole.skipped, 2);
        for page in [1, 7, 1000] {
            let mut reader = LogReader::open(&l, "a", false).unwrap();
            assert_eq!((reader.len(), reader.skipped, reader.last_seq), (40, 2, Some(40)));
            assert_eq!(reader.actions, [("memory.create".to_string(), 40)]);
            let mut text = Vec::new();
            while reader.next_lines(page, |line| text.push(String::from_utf8(line.to_vec()).unwrap())).unwrap() > 0 {}
            assert_eq!(text, whole.lines, "pages of {page}");
        }
        let mut reader = LogReader::open(&l, "a", false).unwrap();
        reader.skip(35);
        assert_eq!(keys(&drain(&mut reader, 2)), ["k35", "k36", "k37", "k38", "k39"]);
        reader.skip(1);
        assert_eq!(reader.next_lines(10, |_| ()).unwrap(), 0);
        // Following, the cut line is left for the next look instead of counted.
        assert_eq!(LogReader::open(&l, "a", true).unwrap().skipped, 1);
    }

    #[test]
    fn r_aud_7_following_reads_new_lines_across_rotations_once_each_in_order() {
        let r = root("follow");
        let l = Layout::at(&r.0);
        std::fs::write(r.0.join("rotifer.json"), r#"{"audit":{"maxSize":"1KB","keep":100}}"#).unwrap();
        let a = gene(&r, "a");
        let b = gene(&r, "b");
        write(&a, "first", T0);
        let mut reader = LogReader::open(&l, "a", true).unwrap();
        assert_eq!(keys(&drain(&mut reader, 10)), ["first"]);
        assert_eq!(reader.poll().unwrap(), 0, "nothing new");
        let mut seen = Vec::new();
        let mut expected = Vec::new();
        for round in 0..6 {
            // Several rotations between two looks (each file holds about 3 lines).
            for i in 0..7 {
                let k = format!("r{round}/{i}");
                write(&a, &k, T0 + 1);
                write(&b, &k, T0 + 1);
                expected.push(k);
            }
            let n = reader.poll().unwrap();
            assert_eq!(n, 7, "round {round}");
            let lines = drain(&mut reader, 3);
            assert!(lines.iter().all(|l| l["agentId"] == "a" && l["committed"] == true));
            seen.extend(keys(&lines));
            assert_eq!(reader.len(), 1 + 7 * (round + 1), "every line counted");
            assert!(reader.spans.len() <= 7, "only the lines of the last look are held");
        }
        assert_eq!(seen, expected);
        // Another agent's append in progress (no newline yet) is read once it is whole.
        let mut f = std::fs::OpenOptions::new().append(true).create(true).open(l.audit_path()).unwrap();
        let line = format!("{{\"ts\":\"2026-12-01T00:00:00.000Z\",\"agentId\":\"a\",\"action\":\"memory.delete\",\"key\":\"late\"}}\n");
        f.write_all(&line.as_bytes()[..20]).unwrap();
        assert_eq!(reader.poll().unwrap(), 0);
        f.write_all(&line.as_bytes()[20..]).unwrap();
        assert_eq!(reader.poll().unwrap(), 1);
        assert_eq!(keys(&drain(&mut reader, 10)), ["late"]);
        assert_eq!(reader.skipped, 0);
    }

    #[test]
    fn r_aud_6_a_line_is_judged_with_the_lines_after_it_even_across_pages() {
        let r = root("judge");
        let l = Layout::at(&r.0);
        let a = gene(&r, "a");
        write(&a, "k", T0);
        // An attempt at tx 2 that did not commit (written ahead, then the process died), and
        // the retry at 2 that did.
        let failed = "{\"ts\":\"2026-12-01T00:00:00.000Z\",\"agentId\":\"a\",\"action\":\"memory.create\",\"tx\":2,\"txLine\":1,\"key\":\"lost\"}\n";
        std::fs::OpenOptions::new().append(true).create(true).open(l.audit_path()).unwrap().write_all(failed.as_bytes()).unwrap();
        write(&a, "kept", T0 + 1);
        let mut reader = LogReader::open(&l, "a", false).unwrap();
        let mut got = Vec::new();
        while reader.next_lines(1, |line| got.push(serde_json::from_slice::<serde_json::Value>(line).unwrap())).unwrap() > 0 {}
        let judged: Vec<(String, bool)> = got.iter().map(|v| (v["key"].as_str().unwrap().to_string(), v["committed"].as_bool().unwrap())).collect();
        assert_eq!(judged, [("k".to_string(), true), ("lost".to_string(), false), ("kept".to_string(), true)]);
    }
}
