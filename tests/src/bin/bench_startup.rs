//! A benchmark of start-up with certificates named in the environment (not a test): process
//! start until the `initialize` response is read, with `SSL_CERT_DIR` set (to `/etc/ssl/certs`,
//! or `BENCH_CERT_DIR`) and without it.
//!
//! `BRAVEBOT_BASELINE_BIN` names a second binary (an older build) run alternately with the
//! first; the medians of `STARTS` starts of each are printed.
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench_startup
//! ```
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use serde_json::json;

const STARTS: usize = 20;

fn main() {
    let mut binaries: Vec<PathBuf> = vec![bravebot_binary()];
    if let Some(baseline) = std::env::var_os("BRAVEBOT_BASELINE_BIN") {
        binaries.push(PathBuf::from(baseline));
    }
    let certificates =
        std::env::var("BENCH_CERT_DIR").unwrap_or_else(|_| "/etc/ssl/certs".to_owned());
    let workspace = tempfile::tempdir().expect("create a workspace");
    let cases = [None, Some(certificates.as_str())];
    let mut times = vec![vec![Vec::new(); cases.len()]; binaries.len()];
    for _ in 0..STARTS {
        for (b, binary) in binaries.iter().enumerate() {
            for (c, dir) in cases.iter().enumerate() {
                let mut options = LspOptions::new(workspace.path())
                    .binary(binary)
                    .timeout(Duration::from_secs(60));
                if let Some(dir) = dir {
                    options = options.env("SSL_CERT_DIR", dir);
                }
                let began = Instant::now();
                let client = LspClient::start(options);
                client.initialize(json!({}));
                times[b][c].push(began.elapsed());
                client.shutdown();
            }
        }
    }
    println!("start -> initialize answered, median of {STARTS} alternating starts");
    for (binary, cases_times) in binaries.iter().zip(times) {
        let medians: Vec<f64> = cases_times
            .into_iter()
            .map(|mut t| {
                t.sort();
                t[t.len() / 2].as_secs_f64() * 1000.0
            })
            .collect();
        println!(
            "{}: without SSL_CERT_DIR {:.2} ms, with SSL_CERT_DIR={certificates} {:.2} ms",
            binary.display(),
            medians[0],
            medians[1]
        );
    }
}
