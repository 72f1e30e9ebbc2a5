//! What compiling a module may cost is bounded before it is compiled (R-RUN-5): the number of
//! functions, the size of each, and the code in all. A module over a bound is refused by name,
//! and one at the bounds still loads.

use rotifer_memory_sandbox::limits::{MAX_CODE_BYTES, MAX_FUNCTIONS, MAX_FUNCTION_BYTES, MAX_FUNCTION_LOCALS, MAX_MODULE_LOCALS};
use rotifer_memory_sandbox::load;

fn leb(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn section(id: u8, body: &[u8], out: &mut Vec<u8>) {
    out.push(id);
    leb(body.len(), out);
    out.extend_from_slice(body);
}

/// A direct gene of `bodies` functions of type (i32, i32) -> i32, each exactly `size` bytes of
/// code (no locals, `i32.const 0; drop` and `nop`s, then `i32.const 0`), the first exported as
/// `express`, with an exported memory.
fn gene(bodies: usize, size: usize) -> Vec<u8> {
    assert!(size >= 4);
    let mut body = vec![0x00];
    while body.len() + 3 + 3 <= size {
        body.extend_from_slice(&[0x41, 0x00, 0x1a]);
    }
    while body.len() + 3 < size {
        body.push(0x01);
    }
    body.extend_from_slice(&[0x41, 0x00, 0x0b]);
    assert_eq!(body.len(), size);
    module(bodies, &body)
}

/// A module of `bodies` functions of type (i32, i32) -> i32 with the same `body` (its locals
/// and code), the first exported as `express`, with an exported memory.
fn module(bodies: usize, body: &[u8]) -> Vec<u8> {
    let mut m = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f], &mut m);
    let mut funcs = Vec::new();
    leb(bodies, &mut funcs);
    funcs.resize(funcs.len() + bodies, 0x00);
    section(3, &funcs, &mut m);
    section(5, &[0x01, 0x00, 0x01], &mut m);
    let mut exports = vec![0x02, 0x07];
    exports.extend_from_slice(b"express");
    exports.extend_from_slice(&[0x00, 0x00, 0x06]);
    exports.extend_from_slice(b"memory");
    exports.extend_from_slice(&[0x02, 0x00]);
    section(7, &exports, &mut m);
    let mut code = Vec::new();
    leb(bodies, &mut code);
    for _ in 0..bodies {
        leb(body.len(), &mut code);
        code.extend_from_slice(body);
    }
    section(10, &code, &mut m);
    m
}

fn refusal(bytes: &[u8]) -> String {
    match load(bytes, "gene \"big\"") {
        Ok(_) => panic!("a module over a compile bound was compiled"),
        Err(e) => e,
    }
}

#[test]
fn a_module_of_too_many_functions_is_refused_before_it_is_compiled() {
    let e = refusal(&gene(MAX_FUNCTIONS + 1, 4));
    assert!(e.contains(&format!("defines {} functions", MAX_FUNCTIONS + 1)) && e.contains(&format!("at most {MAX_FUNCTIONS} functions")), "{e}");
    assert!(e.starts_with("gene \"big\""), "{e}");
}

#[test]
fn a_function_too_large_is_refused_and_one_at_the_bound_loads() {
    let e = refusal(&gene(2, MAX_FUNCTION_BYTES + 1));
    assert!(e.contains(&format!("function 0 of its code section is {} bytes", MAX_FUNCTION_BYTES + 1)), "{e}");
    assert!(e.contains(&format!("at most {} KiB", MAX_FUNCTION_BYTES >> 10)) && e.contains("split it"), "{e}");
    load(&gene(1, MAX_FUNCTION_BYTES), "gene \"at the bound\"").expect("a function of exactly the bound compiles");
}

#[test]
fn too_much_code_in_all_is_refused_although_each_function_is_within_its_bound() {
    let per = MAX_FUNCTION_BYTES;
    let e = refusal(&gene(MAX_CODE_BYTES / per + 1, per));
    assert!(e.contains("bytes of code") && e.contains(&format!("at most {} MiB of code", MAX_CODE_BYTES >> 20)), "{e}");
}

#[test]
fn bytes_that_are_not_a_module_still_get_the_compilers_reason() {
    let mut bytes = gene(1, 16);
    bytes.truncate(bytes.len() - 3);
    let e = load(&bytes, "gene \"cut\"").err().expect("refused");
    assert!(e.contains("is not a valid WebAssembly module"), "{e}");
}

/// A direct gene like `gene`, but each of its `bodies` functions declares `locals` i32 locals
/// in one group (a few bytes of code, whatever the count).
fn gene_with_locals(bodies: usize, locals: usize) -> Vec<u8> {
    let mut body = vec![0x01];
    leb(locals, &mut body);
    body.push(0x7f);
    body.extend_from_slice(&[0x41, 0x00, 0x0b]);
    module(bodies, &body)
}

#[test]
fn a_function_declaring_too_many_locals_is_refused_and_one_at_the_bound_loads() {
    // 50,000 locals cost six bytes of code and Cranelift works per local: thousands of such
    // functions fit every size bound and took minutes to compile.
    let e = refusal(&gene_with_locals(1, MAX_FUNCTION_LOCALS + 1));
    assert!(e.contains(&format!("function 0 of its code section declares {} locals", MAX_FUNCTION_LOCALS + 1)), "{e}");
    assert!(e.contains(&format!("at most {MAX_FUNCTION_LOCALS} locals")), "{e}");
    load(&gene_with_locals(1, MAX_FUNCTION_LOCALS), "gene \"at the bound\"").expect("a function of exactly the bound compiles");
}

#[test]
fn too_many_locals_in_all_are_refused_although_each_function_is_within_its_bound() {
    let per = MAX_FUNCTION_LOCALS;
    let n = MAX_MODULE_LOCALS / per + 1;
    let bytes = gene_with_locals(n, per);
    assert!(bytes.len() < 64 * 1024, "the module is small: {} bytes", bytes.len());
    let started = std::time::Instant::now();
    let e = refusal(&bytes);
    assert!(e.contains("locals in all") && e.contains(&format!("at most {MAX_MODULE_LOCALS} locals in all")), "{e}");
    // Refused before compiling: not a measure of speed, only that nothing was compiled.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[test]
fn locals_at_the_module_bound_load() {
    let per = MAX_FUNCTION_LOCALS;
    load(&gene_with_locals(MAX_MODULE_LOCALS / per, per), "gene \"at the bound\"").expect("a module of exactly the bound compiles");
}
