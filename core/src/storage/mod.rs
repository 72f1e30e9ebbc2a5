//! The storage layer: files and SQLite. Each module uses only those listed before it (and the
//! crate's plain types: `error`, `model`, `time`, `access`, `quota`):
//!
//! 1. `files` — where things live under a project root, and the trust checks on what is there;
//! 2. `lineage` — does a WAL belong to the database file beside it (R-HOST-1b);
//! 3. `watch` — the kernel's change reports (inotify), and how fresh a look a call needs;
//! 4. `logs` — the log files: appended whole, kept open, rotated, read back (R-AUD-2, R-AUD-7);
//! 5. `audit` — the lines of the audit and telemetry logs, and their bound (R-AUD-1/3/4/6);
//! 6. `integrity` — is the database file still the one opened (R-HOST-1);
//! 7. `schema` — the schema this package creates, and what it refuses;
//! 8. `rows` — entries and the agent row as stored;
//! 9. `migrate` — schema version 1 to 2, on open;
//! 10. `opening` — a database built, checked and opened;
//! 11. `store` — the registry of connections, reads, and the transaction of every change.

pub mod files;
pub mod lineage;
pub mod watch;
pub mod logs;
pub mod audit;
pub mod integrity;
pub mod schema;
pub mod rows;
pub mod migrate;
pub mod opening;
pub mod store;
