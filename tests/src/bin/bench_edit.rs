//! A benchmark of the driver's work for an edit of a large open buffer, against
//! `git diff --no-index` on the same pair of files (not a test).
//!
//! Run it with
//!
//! ```sh
//! cargo run --release -p bravebot-tests --bin bench_edit
//! ```
//!
//! For a 1 MiB and a 10 MiB text (short numbered lines) whose middle line is changed, it times
//! what the driver does once the buffer's text and the proposal are in hand: the one line diff
//! ([`Proposal::new`]), the unified diff and the hunks the question carries, the question's
//! subject serialised as JSON (diff, original, proposal and hunks, as on the wire, into the
//! bounded pieces the server's transport writes from), and the whole-line edits
//! `workspace/applyEdit` sends, with LSP positions, serialised too. Peak memory is
//! counted by this program's allocator: the most bytes held at once during that work beyond what
//! was held before it (the buffer's text and the proposal). `git diff --no-index` runs on the same
//! two texts written to files, its output read and discarded, interleaved run by run with the
//! driver's; its peak is the child's `ru_maxrss`. Medians of `RUNS` runs.
//!
//! `edit_file` refuses a file over 4 MiB (the read bound), so the 10 MiB row measures this work
//! alone, as a bound on what a larger bound would cost.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bravebot_core::kernel::label::Label;
use bravebot_core::kernel::labelled::Labelled;
use bravebot_core::kernel::policy;
use bravebot_core::kernel::proposal::{LinePositions, Proposal};
use bravebot_core::pieces::Pieces;
use serde_json::json;

const RUNS: usize = 7;
const SIZES: [usize; 2] = [1 << 20, 10 << 20];

/// Counts the bytes held and the most held at once since the last [`reset_peak`].
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let held = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(held, Ordering::Relaxed);
        // SAFETY: the layout is the caller's, passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the pointer and layout are the caller's, from `alloc` above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            let held = HELD.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                - layout.size();
            PEAK.fetch_max(held, Ordering::Relaxed);
        } else {
            HELD.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as for `realloc` on the system allocator, with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn reset_peak() -> usize {
    let held = HELD.load(Ordering::Relaxed);
    PEAK.store(held, Ordering::Relaxed);
    held
}

/// Numbered lines up to `size` bytes, and the same with its middle line changed.
fn texts(size: usize) -> (String, String) {
    let mut original = String::with_capacity(size + 64);
    let mut n = 0;
    while original.len() < size {
        original.push_str(&format!("line {n:07}: the quick brown fox jumps over it\n"));
        n += 1;
    }
    let middle = format!("line {:07}: ", n / 2);
    let proposed = original.replacen(&middle, "line CHANGED: ", 1);
    (original, proposed)
}

/// The question as the wire carries it, borrowing the texts as the server's serialiser does.
#[derive(serde::Serialize)]
struct Question<'a> {
    subject: Subject<'a>,
}

#[derive(serde::Serialize)]
struct Subject<'a> {
    diff: &'a str,
    original: &'a str,
    proposed: &'a str,
    hunks: Vec<serde_json::Value>,
}

/// The driver's work, as described above; answers how many bytes it sent, so none is elided.
fn driver(original: String, proposed: String) -> usize {
    let proposal = Proposal::new(
        Labelled::new(original, Label::TRUSTED_PRIVATE),
        Labelled::new(proposed, Label::TRUSTED_PRIVATE),
    );
    let original = policy::to_screen(proposal.original()).as_str();
    let diff = proposal.unified_diff("big.txt");
    let hunks: Vec<_> = proposal
        .hunks
        .iter()
        .map(|h| json!({"oldStart": h.old_start, "oldLines": h.old_lines, "newStart": h.new_start, "newLines": h.new_lines}))
        .collect();
    // Serialised once into pieces, as the server's transport does (WRITE-60).
    let mut question = Pieces::default();
    serde_json::to_writer(
        &mut question,
        &Question {
            subject: Subject {
                diff: policy::to_screen(&diff).as_str(),
                original,
                proposed: policy::to_screen(proposal.proposed()).as_str(),
                hunks,
            },
        },
    )
    .expect("serialise");
    let all: Vec<usize> = (0..proposal.hunks.len()).collect();
    let edits = proposal.line_edits(&all);
    let positions = LinePositions::new(original, true);
    let text_edits: Vec<_> = policy::to_buffer_edits(&edits)
        .iter()
        .map(|e| {
            let (a, b) = positions.position(e.old.start);
            let (c, d) = positions.position(e.old.end);
            json!({"range": {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}, "newText": e.new_text})
        })
        .collect();
    let mut apply = Pieces::default();
    serde_json::to_writer(
        &mut apply,
        &json!({"edit": {"documentChanges": [{"edits": text_edits}]}}),
    )
    .expect("serialise");
    question.len() + apply.len()
}

fn max_rss_children_kib() -> i64 {
    // SAFETY: `getrusage` fills the struct it is given and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is a valid `who`.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    println!("edit of an open buffer: driver work against git diff --no-index, median of {RUNS}");
    for size in SIZES {
        let (original, proposed) = texts(size);
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&a, &original).expect("write a");
        std::fs::write(&b, &proposed).expect("write b");
        let (mut ours, mut git, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..RUNS {
            // The buffer's text and the proposal, as `edit_file` holds them when it proposes.
            let (o, p) = (original.clone(), proposed.clone());
            let before = reset_peak();
            let began = Instant::now();
            let sent = driver(o, p);
            ours.push(began.elapsed());
            peaks.push(PEAK.load(Ordering::Relaxed) - before);
            assert!(sent > original.len());
            let began = Instant::now();
            let out = Command::new("git")
                .args(["diff", "--no-index", "--"])
                .arg(&a)
                .arg(&b)
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .expect("run git");
            git.push(began.elapsed());
            assert!(!out.stdout.is_empty(), "git found the change");
        }
        peaks.sort_unstable();
        let peak = peaks[peaks.len() / 2];
        let (ours, git) = (median(ours), median(git));
        let mib = |n: f64| n / f64::from(1 << 20);
        println!(
            "{:>4.0} MiB: driver {:.1} ms, git {:.1} ms, ratio {:.2}x; driver peak {:.1} MiB ({:.2}x the file), git max RSS {:.1} MiB",
            mib(original.len() as f64),
            ours.as_secs_f64() * 1000.0,
            git.as_secs_f64() * 1000.0,
            ours.as_secs_f64() / git.as_secs_f64(),
            mib(peak as f64),
            peak as f64 / original.len() as f64,
            max_rss_children_kib() as f64 / 1024.0,
        );
    }
}
