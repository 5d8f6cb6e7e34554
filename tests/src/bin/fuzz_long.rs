//! The long fuzz run (a benchmark binary, not a test): a million hostile messages from one seed
//! against `bravebot lsp`, a probe after every batch and a real turn through every tenth, then
//! the figures the fuzz suite asserts (PROTO-23): crashes, hangs, unframed bytes on stdout, panics
//! in the log, resident size at the start and the end.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin fuzz_long [MESSAGES] [SEED]
//! ```
//!
//! The binary is the `bravebot` beside this program, or `BRAVEBOT_BIN`. A hang or unframed output
//! fails the run at once (the client's deadline is `BRAVEBOT_TEST_TIMEOUT_SECS`, 20 s by default).
#![allow(clippy::print_stdout)] // The report on stdout is this program's output.

use bravebot_tests::fuzz::FuzzRun;

const BATCH: usize = 1000;
const TURN_EVERY: usize = 10;

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let messages: usize = args
        .next()
        .and_then(|a| a.replace('_', "").parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .unwrap_or(0xb5a7_eb07);
    let turns = (messages / BATCH).div_ceil(TURN_EVERY) + 1;
    let run = FuzzRun::start(turns, None);
    let report = run.run(seed, messages, BATCH, TURN_EVERY, true);
    println!("{report}");
    let clean = report.exit_code == Some(0) && report.panics.is_empty();
    if clean {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
