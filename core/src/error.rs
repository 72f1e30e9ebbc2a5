//! The five error codes of the contract (R-ERR) and the error type every call returns.

use std::fmt;

/// One of the five public error codes (spec §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NotFound,
    AccessDenied,
    QuotaExceeded,
    InvalidInput,
    StorageError,
}

impl ErrorCode {
    /// Every code, in the order of the spec; the one list (JS takes it from the binding).
    pub const ALL: [ErrorCode; 5] =
        [ErrorCode::NotFound, ErrorCode::AccessDenied, ErrorCode::QuotaExceeded, ErrorCode::InvalidInput, ErrorCode::StorageError];

    /// The code as JS and JSON see it, e.g. `MEMORY_NOT_FOUND`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "MEMORY_NOT_FOUND",
            ErrorCode::AccessDenied => "MEMORY_ACCESS_DENIED",
            ErrorCode::QuotaExceeded => "MEMORY_QUOTA_EXCEEDED",
            ErrorCode::InvalidInput => "MEMORY_INVALID_INPUT",
            ErrorCode::StorageError => "MEMORY_STORAGE_ERROR",
        }
    }

    /// The negative return value of a WASM host call (R-WASM-3).
    pub fn wasm_code(self) -> i32 {
        match self {
            ErrorCode::NotFound => -12,
            ErrorCode::AccessDenied => -2,
            ErrorCode::QuotaExceeded => -8,
            ErrorCode::InvalidInput => -10,
            ErrorCode::StorageError => -13,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed call: a code and a message that says what was wrong and how to fix it (R-ERR-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryError {
    pub code: ErrorCode,
    pub message: String,
    /// SQLite found the database damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`): the store that
    /// met it must leave the file as it is, and not checkpoint its WAL into it on close.
    pub damaged: bool,
}

impl MemoryError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        MemoryError { code, message: message.into(), damaged: false }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn denied(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::AccessDenied, message)
    }
    pub fn quota(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::QuotaExceeded, message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }
    pub fn storage(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::StorageError, message)
    }
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for MemoryError {}

/// How a SQLite failure's message starts.
pub const SQLITE_FAILED: &str = "memory database failed: ";

/// What the message of every failure for lack of disk space says (the audit log's, SQLite's):
/// `is_disk_full` looks for it.
pub const DISK_FULL: &str = "the disk is full";

/// Whether `e` failed for lack of disk space.
pub fn is_disk_full(e: &MemoryError) -> bool {
    e.code == ErrorCode::StorageError && e.message.contains(DISK_FULL)
}

impl From<rusqlite::Error> for MemoryError {
    fn from(e: rusqlite::Error) -> Self {
        let damaged = matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase));
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            return MemoryError::storage(format!("{SQLITE_FAILED}{DISK_FULL} ({e}): nothing was changed; free space on the file system of .rotifer/memory"));
        }
        MemoryError { damaged, ..MemoryError::storage(format!("{SQLITE_FAILED}{e}")) }
    }
}

/// What a caught panic says, for the `MEMORY_STORAGE_ERROR` that replaces it (R-ERR-3).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(code: std::ffi::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn a_database_sqlite_finds_damaged_is_marked_so_and_nothing_else_is() {
        for code in [rusqlite::ffi::SQLITE_CORRUPT, rusqlite::ffi::SQLITE_NOTADB] {
            let e = MemoryError::from(sqlite(code));
            assert!(e.damaged, "{e}");
            assert_eq!(e.code, ErrorCode::StorageError);
        }
        for code in [rusqlite::ffi::SQLITE_BUSY, rusqlite::ffi::SQLITE_FULL, rusqlite::ffi::SQLITE_IOERR] {
            assert!(!MemoryError::from(sqlite(code)).damaged);
        }
        assert!(!MemoryError::storage("x").damaged);
    }

    #[test]
    fn an_error_shows_its_code_then_its_message() {
        let e = MemoryError::new(ErrorCode::NotFound, "no entry \"k\"");
        assert_eq!(e.to_string(), "MEMORY_NOT_FOUND: no entry \"k\"");
        assert_eq!(ErrorCode::QuotaExceeded.to_string(), "MEMORY_QUOTA_EXCEEDED");
    }

    #[test]
    fn a_panic_message_is_the_payload_text_whatever_its_type() {
        assert_eq!(panic_message(&"static text"), "static text");
        assert_eq!(panic_message(&String::from("formatted 42")), "formatted 42");
        assert_eq!(panic_message(&42_u32), "unknown panic");
    }
}

/// A storage error about the memory database at `path`: the message names the file.
pub fn storage(path: &std::path::Path, what: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage(format!("memory database {}: {what}", path.display()))
}

