//! The last resort for a gene that runs on the thread of the program that called it (the CLI's
//! `agent run` and `run` call TypeScript genes on Node's main thread, to start fast): nothing on
//! that thread can stop a loop that never returns, and a signal handler there runs only once
//! it does. While armed, a thread of this module ends the whole process when the deadline
//! passes (exit 1) or on SIGINT (exit 130), after writing to stderr the line the caller gave
//! for that case. Whoever ends the process first claims it (`claim`), so exactly one of this
//! thread and the caller's own handlers writes its line.
//!
//! The SIGINT handler is added in front of the one already installed (Node's), which still
//! runs: when the caller's thread is free, its handler may win the claim. Every SIGINT ends the
//! process (the caller's handlers exit too), so one seen stays pending until then.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What an armed watchdog does, and when.
struct Armed {
    /// Milliseconds since the epoch.
    deadline_ms: f64,
    timeout_text: Vec<u8>,
    interrupt_text: Vec<u8>,
    /// Written before `timeout_text` (what the gene's output lost to its bounds).
    note: Vec<u8>,
}

static ARMED: Mutex<Option<Armed>> = Mutex::new(None);
/// Set once the process is being ended, by this thread or by the caller.
static CLAIMED: AtomicBool = AtomicBool::new(false);
static SIGNALLED: AtomicBool = AtomicBool::new(false);
/// The write end of the pipe that wakes the thread (-1 until it runs).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
static START: Once = Once::new();
/// The SIGINT action found when ours was installed, called after ours.
static mut PREVIOUS: Option<libc::sigaction> = None;

/// Arms the watchdog (starting its thread and its SIGINT handler the first time): past
/// `deadline_ms` (ms since the epoch) it writes `timeout_text` and exits 1; on SIGINT it writes
/// `interrupt_text` and exits 130. Arming again replaces the deadline and texts.
pub fn arm(deadline_ms: f64, timeout_text: String, interrupt_text: String) {
    START.call_once(start);
    *lock() = Some(Armed { deadline_ms, timeout_text: timeout_text.into_bytes(), interrupt_text: interrupt_text.into_bytes(), note: Vec::new() });
    wake();
}

/// The line written before the timeout's, replacing any earlier one (armed only).
pub fn note(text: String) {
    if let Some(a) = lock().as_mut() {
        a.note = text.into_bytes();
    }
}

/// Disarms; false when the process is already being ended (the caller should wait for it).
pub fn disarm() -> bool {
    *lock() = None;
    wake();
    !CLAIMED.load(Ordering::SeqCst)
}

/// Claims the ending of the process for the caller: false when the watchdog (or an earlier
/// claim) has it.
pub fn claim() -> bool {
    CLAIMED.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst).is_ok()
}

fn lock() -> std::sync::MutexGuard<'static, Option<Armed>> {
    ARMED.lock().unwrap_or_else(|e| e.into_inner())
}

fn wake() {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let b = 1u8;
        // A full pipe already holds a wake-up.
        unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
    }
}

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs_f64() * 1000.0
}

fn start() {
    let mut fds = [0i32; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return;
    }
    WAKE_FD.store(fds[1], Ordering::SeqCst);
    let read_fd = fds[0];
    let spawned = std::thread::Builder::new().name("rotifer-gene-watchdog".into()).spawn(move || watch(read_fd));
    if spawned.is_ok() {
        install_sigint();
    }
}

/// Waits for the deadline, a SIGINT or a change, and ends the process when one is due.
fn watch(read_fd: i32) {
    loop {
        let wait_ms: i32 = {
            let armed = lock();
            match armed.as_ref() {
                None => -1,
                Some(a) => {
                    // A SIGINT that came while disarmed counts too: the caller's handler had no
                    // turn to run before the next gene took the thread (it claims the end when
                    // it does run, and this does nothing).
                    if SIGNALLED.load(Ordering::SeqCst) {
                        end(&a.interrupt_text, &[], 130);
                    }
                    let left = a.deadline_ms - now_ms();
                    if left <= 0.0 {
                        end(&a.note, &a.timeout_text, 1);
                    }
                    left.ceil().min(i32::MAX as f64) as i32
                }
            }
        };
        let mut pfd = libc::pollfd { fd: read_fd, events: libc::POLLIN, revents: 0 };
        unsafe { libc::poll(&mut pfd, 1, wait_ms) };
        let mut buf = [0u8; 64];
        while unsafe { libc::read(read_fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    }
}

/// Writes `first` and `second` to stderr and exits with `code`, unless the caller has claimed
/// the end (then it does nothing: the caller is ending the process).
fn end(first: &[u8], second: &[u8], code: i32) {
    if !claim() {
        return;
    }
    for text in [first, second] {
        let mut rest = text;
        while !rest.is_empty() {
            let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                break;
            }
            rest = &rest[n as usize..];
        }
    }
    // `_exit`: no destructor or exit handler runs under the thread still in the gene.
    unsafe { libc::_exit(code) };
}

extern "C" fn on_sigint(signum: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // Only async-signal-safe work: a flag and a write, errno kept for the code interrupted.
    let errno = unsafe { *libc::__errno_location() };
    SIGNALLED.store(true, Ordering::SeqCst);
    wake();
    unsafe { *libc::__errno_location() = errno };
    let previous = unsafe { *std::ptr::addr_of!(PREVIOUS) };
    if let Some(p) = previous {
        let handler = p.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            return;
        }
        unsafe {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(handler);
                f(signum, info, context);
            } else {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                f(signum);
            }
        }
    }
}

fn install_sigint() {
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_sigint as *const () as usize;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut new.sa_mask);
        if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old) != 0 {
            return;
        }
        *std::ptr::addr_of_mut!(PREVIOUS) = Some(old);
        libc::sigaction(libc::SIGINT, &new, std::ptr::null_mut());
    }
}
