//! The fixed bounds of one gene run. Figures from the Rotifer playground's sandbox defaults
//! where it has them (fuel, memory, table size); the log and output bounds are this sandbox's.

/// Fuel of one gene run (`rotifer run`, `rotifer test`, `rotifer agent run`, each branch of a
/// composition): wasmtime charges about one unit per instruction.
pub const DEFAULT_FUEL: u64 = 500_000_000;
/// A gene's linear memory never grows past this; `memory.grow` beyond it returns -1.
pub const MEMORY_CAP_BYTES: usize = 256 * 1024 * 1024;
/// The most elements a table may have.
pub const TABLE_ELEMENTS_CAP: usize = 10_000;
/// Fuel one host call costs (the IR metering section's `fuel_per_host_call`).
pub const HOST_CALL_FUEL: u64 = 100;
/// Extra fuel per 64 bytes a host call copies (a log line, stdout, a context value).
pub const HOST_FUEL_PER_64_BYTES: u64 = 1;
/// Extra fuel per byte of a memory call's request (parsed as JSON, its value decoded from
/// base64; paid before it is read) and per byte of the response the call made (entries read and
/// encoded; paid after, whether or not it fitted in `out`), or of the entries the store loaded
/// for it if more (also for a null answer or an error).
pub const FUEL_PER_MEMORY_BYTE: u64 = 1;
/// Extra fuel per buffer a WASI `fd_read`/`fd_write` names (paid before they are walked, empty
/// ones too).
pub const FUEL_PER_IOVEC: u64 = 10;
/// The largest output a gene may give: a WASI gene's stdout, a direct gene's NUL-terminated
/// output (the NUL is looked for no further).
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;
/// The largest module the sandbox compiles (compiling is the one step fuel cannot bound).
pub const MAX_MODULE_BYTES: usize = 32 * 1024 * 1024;
/// The most functions a module may define (each costs the compiler time and memory, even an
/// empty one: 20,000 took 7 s and 135 MiB).
pub const MAX_FUNCTIONS: usize = 20_000;
/// The largest function body the sandbox compiles, in bytes of WebAssembly code (the compiler's
/// time grows faster than a function's size: 64 KiB of `if`s took 1.3 s, 256 KiB 19 s).
pub const MAX_FUNCTION_BYTES: usize = 256 * 1024;
/// The most code (all function bodies) the sandbox compiles in one module: what the compiler
/// keeps of each function until the module is done grows with it (4 MiB of calls: 63 s and
/// 970 MiB at its peak; 2 MiB of `if`s in 2,000 functions: 9 s and 310 MiB).
pub const MAX_CODE_BYTES: usize = 4 * 1024 * 1024;
/// The most locals one function may declare. Declaring them costs a few bytes whatever their
/// number, and the compiler works per local: 20,000 functions of 50,000 locals (a 160 KB module)
/// took 166 s. A QuickJS build declares at most 46 in a function, 4,311 in all.
pub const MAX_FUNCTION_LOCALS: usize = 10_000;
/// The most locals all functions of one module may declare together.
pub const MAX_MODULE_LOCALS: usize = 250_000;
/// The most buffers one WASI read or write may name (POSIX's IOV_MAX).
pub const MAX_IOVECS: u32 = 1024;
/// Bytes of one WASI write to stderr that are looked at; the rest is dropped unread.
pub const MAX_STDERR_SCAN: usize = 64 * 1024;
/// Fuel per byte a host call scans or produces byte by byte (stderr, `random_get`).
pub const FUEL_PER_SCANNED_BYTE: u64 = 1;
