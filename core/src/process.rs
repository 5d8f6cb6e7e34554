//! Starting programs: every child process bravebot runs for a plan goes through [`spawn`].
//!
//! The helper sets the working directory and the environment, puts the child in a process group
//! of its own (so a deadline or a cancel stops everything it started), asks tokio to kill it if
//! its handle is dropped, and never hands it a credential variable (see [`Withheld`]). Output is read
//! through pipes into [`Captured`] buffers that keep the head and the tail of long output, standard
//! output and standard error apart. Programs are not confined (seed 003): they run with the access
//! the person's own shell would give them, unless the caller starts one under a confinement
//! ([`spawn_confined`], with the whole environment it is handed in [`Spec::base`]).

use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::process::{Child, Command};

/// Variables no program bravebot starts is handed from bravebot's own environment, whatever the
/// settings say: bravebot's own credential and the two the providers' tools read theirs from.
pub const WITHHELD_VARIABLES: &[&str] =
    &["BRAVEBOT_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// The variables a session's programs are not handed: [`WITHHELD_VARIABLES`] and every variable
/// the session's settings name as holding the model credential (`model.apiKeyEnv`, from any layer),
/// so a key read from `MY_KEY` is not passed on just because nobody thought to list `MY_KEY` here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Withheld {
    names: Vec<String>,
}

impl Withheld {
    /// The fixed list and the credential variables named.
    pub fn with_credentials<'a>(named: impl IntoIterator<Item = &'a str>) -> Withheld {
        let mut names: Vec<String> = WITHHELD_VARIABLES.iter().map(|n| (*n).to_owned()).collect();
        for name in named {
            // A name the environment could not hold is nothing to remove.
            if !name.is_empty() && !name.contains('=') && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        Withheld { names }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

impl Default for Withheld {
    /// The fixed list alone, for a program started outside any session.
    fn default() -> Withheld {
        Withheld::with_credentials([])
    }
}

/// One stream's output, keeping the first and last `cap / 2` bytes of it and counting the rest.
#[derive(Debug)]
pub struct Captured {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Captured {
    pub fn new(cap: usize) -> Captured {
        Captured {
            cap: cap.max(2),
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let head_room = (self.cap / 2).saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(head_room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest.iter().copied());
        let tail_cap = self.cap - self.cap / 2;
        while self.tail.len() > tail_cap {
            self.tail.pop_front();
        }
    }

    /// Every byte the stream produced, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// How many bytes in the middle were dropped.
    pub fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// What was kept, with a marker where the middle was dropped.
    pub fn kept(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        if self.dropped() > 0 {
            out.extend_from_slice(format!("\n[… {} bytes dropped …]\n", self.dropped()).as_bytes());
        }
        out.extend(self.tail.iter().copied());
        out
    }

    /// What arrived after the first `seen` bytes of the stream, as far as it was kept: for a
    /// running job asked what is new.
    pub fn since(&self, seen: u64) -> Vec<u8> {
        let head_end = self.head.len() as u64;
        let tail_start = self.total - self.tail.len() as u64;
        let mut out = Vec::new();
        if seen < head_end {
            out.extend_from_slice(&self.head[usize::try_from(seen).unwrap_or(usize::MAX)..]);
        }
        if seen.max(head_end) < tail_start {
            out.extend_from_slice(
                format!(
                    "\n[… {} bytes dropped …]\n",
                    tail_start - seen.max(head_end)
                )
                .as_bytes(),
            );
        }
        let from_tail = seen.max(tail_start) - tail_start;
        out.extend(
            self.tail
                .iter()
                .skip(usize::try_from(from_tail).unwrap_or(usize::MAX)),
        );
        out
    }
}

pub type SharedCapture = Arc<Mutex<Captured>>;

pub fn shared(cap: usize) -> SharedCapture {
    Arc::new(Mutex::new(Captured::new(cap)))
}

/// Reads a pipe to its end into a capture, on a blocking thread.
pub fn capture(
    mut reader: std::io::PipeReader,
    into: SharedCapture,
) -> tokio::task::JoinHandle<()> {
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => into
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(&buf[..n]),
            }
        }
    })
}

/// Writes bytes into a pipe and closes it, on a blocking thread. A program that stops reading
/// early is not an error of ours.
pub fn feed(mut writer: std::io::PipeWriter, bytes: Vec<u8>) -> tokio::task::JoinHandle<()> {
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let _ = writer.write_all(&bytes);
    })
}

/// Everything needed to start one program.
pub struct Spec<'a> {
    pub program: &'a Path,
    /// `argv[0]` as the line wrote it.
    pub arg0: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    /// Variables set for this program on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// The whole environment to start from instead of the inherited one (a confined run's).
    pub base: Option<&'a [(std::ffi::OsString, std::ffi::OsString)]>,
    /// Inherited variables it is not handed.
    pub withheld: &'a Withheld,
    pub stdin: Stdio,
    pub stdout: Stdio,
    pub stderr: Stdio,
}

/// Why a program could not start.
#[derive(Debug, thiserror::Error)]
#[error("{program} could not be started: {source}")]
pub struct SpawnError {
    pub program: PathBuf,
    pub source: std::io::Error,
}

/// Starts one program as the leader of a new process group.
pub fn spawn(spec: Spec<'_>) -> Result<Child, SpawnError> {
    let program = spec.program.to_path_buf();
    command(spec)
        .spawn()
        .map_err(|source| SpawnError { program, source })
}

/// Starts one program as [`spawn`] does, confined by `confined` from its first instruction (the
/// Landlock ruleset is applied in the child before it runs the program, SANDBOX-1).
pub fn spawn_confined(
    spec: Spec<'_>,
    confined: &crate::sandbox::Confined,
) -> Result<Child, SpawnError> {
    let program = spec.program.to_path_buf();
    let mut command = command(spec);
    confined.apply(command.as_std_mut());
    command
        .spawn()
        .map_err(|source| SpawnError { program, source })
}

/// The command [`spawn`] starts, built in one place.
fn command(spec: Spec<'_>) -> Command {
    let mut command = Command::new(spec.program);
    command.arg0(spec.arg0);
    command
        .args(spec.args)
        .current_dir(spec.cwd)
        .kill_on_drop(true)
        .process_group(0);
    if let Some(base) = spec.base {
        command.env_clear();
        command.envs(base.iter().map(|(n, v)| (n, v)));
    }
    for name in spec.withheld.names() {
        command.env_remove(name);
    }
    command.envs(spec.env);
    command
        .stdin(spec.stdin)
        .stdout(spec.stdout)
        .stderr(spec.stderr);
    command
}

/// Stops a process group: politely, then for good.
pub fn stop_group(group: u32) {
    let Ok(group) = i32::try_from(group) else {
        return;
    };
    // SAFETY: signalling a process group we created; a group that is gone answers ESRCH.
    unsafe {
        libc::killpg(group, libc::SIGTERM);
        libc::killpg(group, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: RUNTOOL-4
    #[test]
    fn captured_keeps_head_and_tail_and_says_what_it_dropped() {
        let mut c = Captured::new(8);
        c.push(b"0123456789abcdef");
        assert_eq!(c.total(), 16);
        assert_eq!(c.dropped(), 8);
        let kept = String::from_utf8(c.kept()).unwrap_or_default();
        assert!(
            kept.starts_with("0123") && kept.ends_with("cdef") && kept.contains("8 bytes dropped"),
            "{kept}"
        );
        let mut small = Captured::new(100);
        small.push(b"hello ");
        small.push(b"world");
        assert_eq!(small.kept(), b"hello world");
        assert_eq!(small.since(6), b"world");
        assert_eq!(small.since(11), b"");
    }

    // Verifies: RUNTOOL-6
    #[test]
    fn a_program_is_never_handed_bravebots_credential_variables() {
        let args = Vec::new();
        let built = command(Spec {
            program: Path::new("/bin/true"),
            arg0: "true",
            args: &args,
            cwd: Path::new("/"),
            env: vec![("BRAVEBOT_API_KEY".into(), "sneaked".into())],
            withheld: &Withheld::default(),
            base: None,
            stdin: Stdio::null(),
            stdout: Stdio::null(),
            stderr: Stdio::null(),
        });
        let envs: Vec<(String, Option<String>)> = built
            .as_std()
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        // A line's own NAME=value may set it (the person approved that line); what is inherited
        // is removed.
        assert!(
            envs.iter().any(|(k, _)| k == "BRAVEBOT_API_KEY"),
            "{envs:?}"
        );
        let inherited_removed = {
            let mut c = command(Spec {
                program: Path::new("/bin/true"),
                arg0: "true",
                args: &args,
                cwd: Path::new("/"),
                env: Vec::new(),
                withheld: &Withheld::default(),
                base: None,
                stdin: Stdio::null(),
                stdout: Stdio::null(),
                stderr: Stdio::null(),
            });
            c.as_std_mut()
                .get_envs()
                .any(|(k, v)| k == "BRAVEBOT_API_KEY" && v.is_none())
        };
        assert!(inherited_removed);
    }

    // Verifies: CRED-2
    #[test]
    fn a_program_is_not_handed_the_providers_variables_or_the_one_the_credential_came_from() {
        let args = Vec::new();
        let withheld = Withheld::with_credentials(["MY_MODEL_KEY", "", "A=B", "MY_MODEL_KEY"]);
        let built = command(Spec {
            program: Path::new("/bin/true"),
            arg0: "true",
            args: &args,
            cwd: Path::new("/"),
            env: Vec::new(),
            withheld: &withheld,
            base: None,
            stdin: Stdio::null(),
            stdout: Stdio::null(),
            stderr: Stdio::null(),
        });
        let removed: Vec<String> = built
            .as_std()
            .get_envs()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        let mut removed = removed;
        removed.sort();
        assert_eq!(
            removed,
            [
                "ANTHROPIC_API_KEY",
                "BRAVEBOT_API_KEY",
                "MY_MODEL_KEY",
                "OPENAI_API_KEY"
            ]
        );
    }

    #[tokio::test]
    async fn spawn_sets_the_environment_and_reads_both_streams_apart() {
        let (out_r, out_w) = std::io::pipe().unwrap_or_else(|e| panic!("{e}"));
        let (err_r, err_w) = std::io::pipe().unwrap_or_else(|e| panic!("{e}"));
        let (out, err) = (shared(1024), shared(1024));
        let readers = [capture(out_r, out.clone()), capture(err_r, err.clone())];
        let args = vec![
            "-c".to_string(),
            "echo out $EXTRA; echo err >&2".to_string(),
        ];
        let mut child = spawn(Spec {
            program: Path::new("/bin/sh"),
            arg0: "sh",
            args: &args,
            cwd: &std::env::temp_dir(),
            env: vec![("EXTRA".into(), "1".into())],
            withheld: &Withheld::default(),
            base: None,
            stdin: Stdio::null(),
            stdout: Stdio::from(out_w),
            stderr: Stdio::from(err_w),
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(child.wait().await.is_ok_and(|s| s.success()));
        for r in readers {
            let _ = r.await;
        }
        assert_eq!(out.lock().map(|c| c.kept()).unwrap_or_default(), b"out 1\n");
        assert_eq!(err.lock().map(|c| c.kept()).unwrap_or_default(), b"err\n");
    }
}
