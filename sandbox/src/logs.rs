//! What a gene logs (`rotifer.log`, `env.log`, a WASI gene's stderr), bounded per run in bytes
//! and rate, so that no gene can fill the host's memory or disk through its logs. What is
//! dropped is counted and told in one line when the run ends.

use std::io::Write;
use std::time::Instant;

/// The bounds of one run's log.
#[derive(Debug, Clone, Copy)]
pub struct LogLimits {
    /// Bytes of log text a run may write in all (prefixes included).
    pub bytes_per_run: usize,
    /// Lines a run may write per second, on average.
    pub lines_per_second: u32,
    /// Lines a run may write at once before the rate applies.
    pub burst_lines: u32,
    /// A longer line is cut here, with `…` (the gene's memory is read no further).
    pub line_bytes: usize,
}

impl Default for LogLimits {
    fn default() -> Self {
        LogLimits { bytes_per_run: 1024 * 1024, lines_per_second: 100, burst_lines: 1000, line_bytes: 4096 }
    }
}

/// Where log lines go: the process's stderr, or a test's buffer.
pub trait LogSink: Send {
    fn line(&mut self, line: &str);
}

/// Writes each line to stderr at once (unbuffered, so lines keep their order with the host's).
pub struct Stderr;

impl LogSink for Stderr {
    fn line(&mut self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.write_all(b"\n");
    }
}

/// One run's log: a gene name prefix, the limits, what was written and dropped.
pub struct RunLog {
    gene: String,
    limits: LogLimits,
    sink: Box<dyn LogSink>,
    written: usize,
    tokens: f64,
    refilled: Instant,
    dropped_lines: u64,
    dropped_bytes: u64,
    /// A WASI gene's stderr text after its last newline.
    partial: Vec<u8>,
}

impl RunLog {
    pub fn new(gene: &str, limits: LogLimits, sink: Box<dyn LogSink>) -> RunLog {
        RunLog {
            gene: gene.to_string(),
            limits,
            sink,
            written: 0,
            tokens: f64::from(limits.burst_lines),
            refilled: Instant::now(),
            dropped_lines: 0,
            dropped_bytes: 0,
            partial: Vec::new(),
        }
    }

    /// How many bytes of a message of `len` bytes are worth reading from the gene's memory.
    pub fn readable(&self, len: usize) -> usize {
        len.min(self.limits.line_bytes)
    }

    /// Logs one message of `full_len` bytes of which `text` are the first (already cut): each of
    /// its lines on a line of its own with the gene's prefix, so that no line of a gene's can pass
    /// for one of the host's, and each line taking its share of the rate and the byte bound (a
    /// message of a thousand lines costs what a thousand messages do).
    pub fn message(&mut self, level: &str, text: &[u8], full_len: usize) {
        let decoded = String::from_utf8_lossy(text);
        let body = decoded.trim_end_matches('\n');
        // What was not read of the message is counted with its last line.
        let unread = full_len.saturating_sub(text.len());
        let mut lines = body.split('\n').peekable();
        while let Some(line) = lines.next() {
            let last = lines.peek().is_none();
            if last {
                self.line(level, line, line.len() + unread, unread > 0);
            } else {
                self.line(level, line, line.len(), false);
            }
        }
    }

    /// Logs one line (no newline in it) of `len` bytes; `cut`: the gene's message went on.
    fn line(&mut self, level: &str, text: &str, len: usize, cut: bool) {
        if !self.take_token() {
            self.drop_line(len);
            return;
        }
        let mut body = printable(text);
        // Escapes lengthen a line: the cut applies to what is printed.
        let mut cut = cut;
        if body.len() > self.limits.line_bytes {
            let mut at = self.limits.line_bytes;
            while !body.is_char_boundary(at) {
                at -= 1;
            }
            body.truncate(at);
            cut = true;
        }
        if cut {
            body.push_str(&format!("… ({len} bytes in all)"));
        }
        let line = format!("[{}] {}: {}", self.gene, level, body);
        // The line and its newline.
        if self.written + line.len() + 1 > self.limits.bytes_per_run {
            self.drop_line(len);
            return;
        }
        self.written += line.len() + 1;
        self.sink.line(&line);
    }

    /// Text a WASI gene wrote to stderr: logged line by line at level `stderr`.
    pub fn stderr(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.partial);
                self.message("stderr", &line, line.len());
            } else if self.partial.len() < self.limits.line_bytes {
                self.partial.push(b);
            } else {
                // Past the cut: counted as dropped when the line ends.
                self.dropped_bytes += 1;
            }
        }
    }

    /// Bytes of a write that were not looked at (past `MAX_STDERR_SCAN`): dropped, counted.
    pub fn drop_unread(&mut self, bytes: usize) {
        if bytes > 0 {
            self.dropped_lines += 1;
            self.dropped_bytes += bytes as u64;
        }
    }

    fn take_token(&mut self) -> bool {
        let now = Instant::now();
        let elapsed = now.duration_since(self.refilled).as_secs_f64();
        self.refilled = now;
        self.tokens = (self.tokens + elapsed * f64::from(self.limits.lines_per_second)).min(f64::from(self.limits.burst_lines));
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn drop_line(&mut self, len: usize) {
        self.dropped_lines += 1;
        self.dropped_bytes += len as u64;
    }

    /// Flushes a last stderr line and tells what was dropped, once.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.message("stderr", &line, line.len());
        }
        if self.dropped_lines > 0 {
            let l = self.limits;
            let note = format!(
                "[{}] note: {} log line(s) ({} bytes) dropped: a gene may log {} bytes per run, {} lines per second (bursts of {})",
                self.gene, self.dropped_lines, self.dropped_bytes, l.bytes_per_run, l.lines_per_second, l.burst_lines
            );
            self.sink.line(&note);
            self.dropped_lines = 0;
            self.dropped_bytes = 0;
        }
    }
}

/// Control characters (C0, DEL, C1) and the characters that reorder or break what follows (bidi
/// marks, embeddings, overrides and isolates; the line and paragraph separators) shown as escapes,
/// so that a gene cannot move the terminal's cursor, retitle its window or disguise a line. Tab
/// stays. The CLI escapes the same set (lib/cli/terminal-text.js).
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            c if c.is_control() || is_reordering(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The bidi controls and the line and paragraph separators.
fn is_reordering(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    pub struct Lines(pub Arc<Mutex<Vec<String>>>);
    impl LogSink for Lines {
        fn line(&mut self, line: &str) {
            self.0.lock().unwrap().push(line.to_string());
        }
    }

    #[test]
    fn a_flood_is_cut_to_the_burst_and_told_once() {
        let lines = Lines::default();
        let mut log = RunLog::new("g", LogLimits { bytes_per_run: 1 << 20, lines_per_second: 1, burst_lines: 5, line_bytes: 100 }, Box::new(lines.clone()));
        for _ in 0..50 {
            log.message("info", b"hello", 5);
        }
        log.finish();
        let got = lines.0.lock().unwrap();
        assert_eq!(got.len(), 6, "{got:?}");
        assert_eq!(got[0], "[g] info: hello");
        assert!(got[5].starts_with("[g] note: 45 log line(s) (225 bytes) dropped"), "{}", got[5]);
    }

    #[test]
    fn the_byte_bound_holds_and_long_lines_are_cut() {
        let lines = Lines::default();
        let limits = LogLimits { bytes_per_run: 1000, lines_per_second: 1000, burst_lines: 1000, line_bytes: 100 };
        let mut log = RunLog::new("g", limits, Box::new(lines.clone()));
        let big = vec![b'x'; 60_000];
        for _ in 0..100 {
            let n = log.readable(big.len());
            log.message("warn", &big[..n], big.len());
        }
        log.finish();
        let got = lines.0.lock().unwrap();
        let total: usize = got[..got.len() - 1].iter().map(|l| l.len() + 1).sum();
        assert!(total <= 1000, "{total}");
        assert!(got[0].ends_with("… (60000 bytes in all)"), "{}", got[0]);
        assert!(got.last().unwrap().contains("dropped"));
    }

    #[test]
    fn the_byte_bound_is_exact() {
        // Each line "[g] info: xxxxx" is 15 bytes and its newline 1: a bound of 48 holds three.
        for (bound, expected) in [(47, 2), (48, 3), (49, 3)] {
            let lines = Lines::default();
            let limits = LogLimits { bytes_per_run: bound, lines_per_second: 1000, burst_lines: 1000, line_bytes: 100 };
            let mut log = RunLog::new("g", limits, Box::new(lines.clone()));
            for _ in 0..10 {
                log.message("info", b"xxxxx", 5);
            }
            let written = lines.0.lock().unwrap().len();
            assert_eq!(written, expected, "bound {bound}");
        }
    }

    #[test]
    fn the_rate_refills_with_time() {
        let lines = Lines::default();
        let limits = LogLimits { bytes_per_run: 1 << 20, lines_per_second: 100, burst_lines: 2, line_bytes: 100 };
        let mut log = RunLog::new("g", limits, Box::new(lines.clone()));
        for _ in 0..10 {
            log.message("info", b"a", 1);
        }
        assert_eq!(lines.0.lock().unwrap().len(), 2, "the burst");
        // 300 ms at 100 a second refill at least the burst again (the bucket holds 2).
        std::thread::sleep(std::time::Duration::from_millis(300));
        for _ in 0..10 {
            log.message("info", b"b", 1);
        }
        assert_eq!(lines.0.lock().unwrap().len(), 4);
    }

    #[test]
    fn an_over_long_stderr_line_is_cut_and_what_was_cut_is_counted() {
        let lines = Lines::default();
        let limits = LogLimits { bytes_per_run: 1 << 20, lines_per_second: 1, burst_lines: 1, line_bytes: 10 };
        let mut log = RunLog::new("g", limits, Box::new(lines.clone()));
        log.stderr(b"0123456789abcdef\nsecond\n");
        log.drop_unread(1000);
        log.finish();
        let got = lines.0.lock().unwrap();
        assert_eq!(got[0], "[g] stderr: 0123456789");
        // The 6 bytes past the cut, the second line (rate), and the 1000 unread bytes.
        assert!(got[1].starts_with("[g] note: 2 log line(s) (1012 bytes) dropped"), "{}", got[1]);
    }

    #[test]
    fn a_line_of_control_characters_is_cut_after_escaping() {
        let lines = Lines::default();
        let limits = LogLimits { line_bytes: 100, ..LogLimits::default() };
        let mut log = RunLog::new("g", limits, Box::new(lines.clone()));
        let zeros = vec![0u8; 100];
        log.message("info", &zeros, zeros.len());
        let got = lines.0.lock().unwrap();
        let body = got[0].strip_prefix("[g] info: ").unwrap();
        assert!(body.len() <= 100 + "… (100 bytes in all)".len(), "{}", body.len());
        assert!(body.starts_with("\\u{0}") && body.ends_with("… (100 bytes in all)"), "{body}");
    }

    #[test]
    fn a_message_of_many_lines_is_one_prefixed_line_each() {
        let lines = Lines::default();
        let mut log = RunLog::new("g", LogLimits::default(), Box::new(lines.clone()));
        let text = "one\u{202e}\nerror: database corrupt\n\nlast\u{9b}2J\n".as_bytes();
        log.message("info", text, text.len());
        log.finish();
        assert_eq!(
            *lines.0.lock().unwrap(),
            vec!["[g] info: one\\u{202e}", "[g] info: error: database corrupt", "[g] info: ", "[g] info: last\\u{9b}2J"]
        );
    }

    #[test]
    fn the_rate_counts_lines_not_messages() {
        let lines = Lines::default();
        let limits = LogLimits { bytes_per_run: 1 << 20, lines_per_second: 1, burst_lines: 5, line_bytes: 100 };
        let mut log = RunLog::new("g", limits, Box::new(lines.clone()));
        let text = b"a\nb\nc\nd\n";
        for _ in 0..3 {
            log.message("info", text, text.len());
        }
        log.finish();
        let got = lines.0.lock().unwrap();
        assert_eq!(got.len(), 6, "five lines and the note: {got:?}");
        assert!(got[5].starts_with("[g] note: 7 log line(s) (7 bytes) dropped"), "{}", got[5]);
    }

    #[test]
    fn a_cut_message_says_so_on_its_last_line() {
        let lines = Lines::default();
        let mut log = RunLog::new("g", LogLimits::default(), Box::new(lines.clone()));
        log.message("warn", b"first\nsecond", 50);
        assert_eq!(*lines.0.lock().unwrap(), vec!["[g] warn: first", "[g] warn: second… (44 bytes in all)"]);
    }

    #[test]
    fn stderr_is_split_into_lines_and_control_characters_escaped() {
        let lines = Lines::default();
        let mut log = RunLog::new("g", LogLimits::default(), Box::new(lines.clone()));
        log.stderr(b"one\ntw");
        log.stderr(b"o\x1b[2J\nthree");
        log.finish();
        assert_eq!(*lines.0.lock().unwrap(), vec!["[g] stderr: one", "[g] stderr: two\\u{1b}[2J", "[g] stderr: three"]);
    }
}
