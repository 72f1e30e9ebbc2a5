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

use crate::error::Result;
use crate::storage::audit::head;
use crate::storage::files::Layout;
use crate::storage::logs::{for_each_line, open_files};
use crate::storage::store::{read_agent, AgentStore, IfMissing};
use rusqlite::{Transaction, TransactionBehavior};
use std::collections::HashSet;

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
/// or not (R-AUD-6, R-AUD-7). The agent's `last_seq` is read under its write lock, with the files
/// opened (and their sizes taken) before the lock is let go: every attempt whose lines are read
/// had then committed or failed for good, so the judgement is exact for the lines read.
pub fn read_agent_log(layout: &Layout, agent_id: &str) -> Result<AgentLog> {
    crate::model::check_agent_id(agent_id)?;
    let path = layout.audit_path();
    let (last_seq, files) = match AgentStore::open(layout, agent_id, IfMissing::Skip)? {
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
    let mut skipped = 0;
    let mut lines = Vec::new();
    let mut marks = Vec::new();
    for_each_line(files, |line| {
        let trimmed = line.trim_ascii_end();
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match head(trimmed) {
            None => skipped += 1,
            Some(h) if h.agent_id == agent_id => {
                marks.push(TxMark { tx: h.tx, tx_line: h.tx_line });
                lines.push(String::from_utf8_lossy(trimmed).into_owned());
            }
            Some(_) => {}
        }
    })?;
    for (line, committed) in lines.iter_mut().zip(judge(&marks, last_seq)) {
        // A whole audit line is a JSON object: it ends with `}`.
        line.truncate(line.trim_end().len() - 1);
        line.push_str(if committed { ",\"committed\":true}" } else { ",\"committed\":false}" });
    }
    Ok(AgentLog { lines, skipped, last_seq })
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
}
