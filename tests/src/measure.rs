//! What the benchmark binaries read of a process while they measure it.

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), or `None` where there is no `/proc`
/// or no such field.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}
