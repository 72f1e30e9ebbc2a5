//! The storage layer: files and SQLite. Each module uses only those listed before it (and the
//! crate's plain types: `error`, `model`, `time`, `access`, `quota`):
//!
//! 1. `files` — where things live under a project root, and the trust checks on what is there;
//! 2. `fence` — the mark a move to another binding leaves on a database (R-MIG-4);
//! 3. `lineage` — does a WAL belong to the database file beside it (R-HOST-1b);
//! 4. `watch` — the kernel's change reports (inotify), and how fresh a look a call needs;
//! 5. `logs` — the log files: appended whole, kept open, rotated, read back (R-AUD-2, R-AUD-7);
//! 6. `audit` — the lines of the audit and telemetry logs, and their bound (R-AUD-1/3/4/6);
//! 7. `integrity` — is the database file still the one opened (R-HOST-1);
//! 8. `schema` — the schema this package creates, and what it refuses;
//! 9. `rows` — entries and the agent row as stored;
//! 10. `migrate` — schema version 1 to 2, on open;
//! 11. `opening` — a database built, checked and opened;
//! 12. `store` — the registry of connections, reads, and the transaction of every change.

pub mod files;
pub mod fence;
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
