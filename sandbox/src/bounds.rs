//! What compiling a module may cost, bounded before it is compiled. Fuel and the memory cap
//! reach only a running gene, not Cranelift: its time grows faster than a function's size
//! (64 KiB of `if`s took 1.3 s, 256 KiB 19 s), and its memory with the code it has compiled so
//! far (up to ~230 bytes kept per byte of code, until the module is done) and with the number of
//! functions (a 3.5 MB module took 2 GiB). So the code section is read first (its header and each
//! function's size and its locals' declarations only, no validation: the compiler validates) and
//! a module with more functions, a larger function, more code in all, or more locals (declared in
//! a few bytes whatever their number, and compiled one by one) than the sandbox compiles is
//! refused before any of it is compiled, with the bound named. `bench/compile-cost.js` measures the figures.

use crate::limits::{MAX_CODE_BYTES, MAX_FUNCTIONS, MAX_FUNCTION_BYTES, MAX_FUNCTION_LOCALS, MAX_MODULE_LOCALS};
use wasmparser::{Parser, Payload};

/// `Err` naming the bound `bytes` is over; `Ok` otherwise, and for bytes that are not a module
/// (the compiler's message says why).
pub fn within_compile_bounds(bytes: &[u8], what: &str) -> Result<(), String> {
    let mut index = 0usize;
    let mut all_locals = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(payload) = payload else { return Ok(()) };
        match payload {
            Payload::FunctionSection(reader) => too_many(reader.count(), what)?,
            Payload::CodeSectionStart { count, size, .. } => {
                too_many(count, what)?;
                if size as usize > MAX_CODE_BYTES {
                    return Err(format!(
                        "{what} has {size} bytes of code; the sandbox compiles modules of at most {} MiB of code (compiling keeps what it made of each function until the module is done)",
                        MAX_CODE_BYTES >> 20
                    ));
                }
            }
            Payload::CodeSectionEntry(body) => {
                let size = body.range().len();
                if size > MAX_FUNCTION_BYTES {
                    return Err(format!(
                        "{what}: function {index} of its code section is {size} bytes; the sandbox compiles functions of at most {} KiB each (compiling needs memory that grows faster than a function's size): split it into smaller functions",
                        MAX_FUNCTION_BYTES >> 10
                    ));
                }
                let locals = declared_locals(&body);
                if locals > MAX_FUNCTION_LOCALS {
                    return Err(format!(
                        "{what}: function {index} of its code section declares {locals} locals; the sandbox compiles functions of at most {MAX_FUNCTION_LOCALS} locals (compiling works per local)"
                    ));
                }
                all_locals += locals;
                if all_locals > MAX_MODULE_LOCALS {
                    return Err(format!(
                        "{what} declares more than {MAX_MODULE_LOCALS} locals in all (at function {index} of its code section); the sandbox compiles modules of at most {MAX_MODULE_LOCALS} locals in all (compiling works per local)"
                    ));
                }
                index += 1;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The locals `body` declares (saturating; a declaration that does not parse counts as none:
/// the compiler refuses it).
fn declared_locals(body: &wasmparser::FunctionBody) -> usize {
    let Ok(mut reader) = body.get_locals_reader() else { return 0 };
    let mut total = 0usize;
    for _ in 0..reader.get_count() {
        match reader.read() {
            Ok((count, _)) => total = total.saturating_add(count as usize),
            Err(_) => break,
        }
    }
    total
}

fn too_many(count: u32, what: &str) -> Result<(), String> {
    if count as usize > MAX_FUNCTIONS {
        return Err(format!(
            "{what} defines {count} functions; the sandbox compiles modules of at most {MAX_FUNCTIONS} functions (compiling needs time and memory for each)"
        ));
    }
    Ok(())
}
