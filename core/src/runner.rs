//! Running a compiled [`Plan`]: exactly the programs, arguments, redirects and sequencing it
//! holds, and nothing a shell would add.
//!
//! Pipelines are joined with OS pipes; each pipeline's last standard output and every standard
//! error are read into the run's two [`Captured`](crate::process::Captured) buffers, kept apart.
//! A deadline or a stop kills every process group the run started and starts nothing further.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::cmdline::{Command, Join, Pipeline, Plan, Redirect, Sequence, Step, Streams};
use crate::process::{self, SharedCapture, Spec};

/// Where a run's output goes, and what its first program reads.
pub struct RunIo {
    pub stdout: SharedCapture,
    pub stderr: SharedCapture,
    /// Fed to the first program's standard input (`stdin_ref`); otherwise it reads nothing.
    pub stdin: Option<Vec<u8>>,
    /// Inherited variables no program of the run is handed.
    pub withheld: process::Withheld,
    /// The confinement every program starts under (`run.confined: unasked`, RUN-17), with its
    /// environment instead of the inherited one; `None` runs them as the person's shell would.
    pub confinement: Option<std::sync::Arc<crate::sandbox::run::RunConfinement>>,
}

/// How one program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepExit {
    pub program: String,
    /// The exit code; `None` when a signal ended it or it never started.
    pub code: Option<i32>,
    /// Why it never started, when it did not.
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    Deadline,
    Stop,
}

#[derive(Clone, Debug)]
pub struct RunReport {
    pub exits: Vec<StepExit>,
    pub stopped: Option<Stopped>,
    pub elapsed: Duration,
}

impl RunReport {
    /// Whether any program exited non-zero, was killed, never started, or the run was stopped.
    pub fn failed(&self) -> bool {
        self.stopped.is_some()
            || self
                .exits
                .iter()
                .any(|e| e.code != Some(0) || e.error.is_some())
    }

    /// One line: how each program exited, in the order they ran.
    pub fn summary(&self) -> String {
        let codes: Vec<String> = self
            .exits
            .iter()
            .map(|e| match (&e.code, &e.error) {
                (_, Some(error)) => format!("{}: did not start ({error})", e.program),
                (Some(code), None) => format!("{}: exit {code}", e.program),
                (None, None) => format!("{}: killed by a signal", e.program),
            })
            .collect();
        let stopped = match self.stopped {
            Some(Stopped::Deadline) => "; stopped at the deadline",
            Some(Stopped::Stop) => "; stopped on request",
            None => "",
        };
        format!(
            "{} after {:.1} s{stopped}",
            codes.join(", "),
            self.elapsed.as_secs_f64()
        )
    }
}

struct Run {
    io_stdout: SharedCapture,
    io_stderr: SharedCapture,
    stdin: Mutex<Option<Vec<u8>>>,
    groups: Arc<Mutex<Vec<u32>>>,
    exits: Mutex<Vec<StepExit>>,
    stopped: CancellationToken,
    directory: std::path::PathBuf,
    withheld: process::Withheld,
    /// The confinement every program of the run starts under, if it runs confined.
    confinement: Option<std::sync::Arc<crate::sandbox::run::RunConfinement>>,
}

/// Runs `plan` to its end, its deadline, or `stop`.
pub async fn execute(
    plan: &Plan,
    io: RunIo,
    stop: CancellationToken,
    deadline: Duration,
) -> RunReport {
    let began = Instant::now();
    let groups: Arc<Mutex<Vec<u32>>> = Arc::default();
    let halted = CancellationToken::new();
    let run = Run {
        io_stdout: io.stdout,
        io_stderr: io.stderr,
        stdin: Mutex::new(io.stdin),
        groups: groups.clone(),
        exits: Mutex::new(Vec::new()),
        stopped: halted.clone(),
        directory: plan.directory().to_path_buf(),
        withheld: io.withheld,
        confinement: io.confinement,
    };
    let finished = CancellationToken::new();
    let watcher = {
        let (finished, halted, groups) = (finished.clone(), halted.clone(), groups.clone());
        tokio::spawn(async move {
            let why = tokio::select! {
                () = finished.cancelled() => return None,
                () = stop.cancelled() => Stopped::Stop,
                () = tokio::time::sleep(deadline) => Stopped::Deadline,
            };
            halted.cancel();
            for g in groups.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                process::stop_group(*g);
            }
            Some(why)
        })
    };
    run_sequence(&run, plan.sequence()).await;
    finished.cancel();
    let stopped = watcher.await.ok().flatten();
    let exits = run.exits.into_inner().unwrap_or_else(|p| p.into_inner());
    RunReport {
        exits,
        stopped,
        elapsed: began.elapsed(),
    }
}

fn run_sequence<'a>(run: &'a Run, sequence: &'a Sequence) -> BoxFuture<'a, bool> {
    Box::pin(async move {
        let mut ok = run_step(run, sequence.first()).await;
        for (join, step) in sequence.rest() {
            if run.stopped.is_cancelled() {
                return false;
            }
            let go = match join {
                Join::And => ok,
                Join::Or => !ok,
                Join::Then => true,
            };
            if go {
                ok = run_step(run, step).await;
            }
        }
        ok
    })
}

async fn run_step(run: &Run, step: &Step) -> bool {
    if run.stopped.is_cancelled() {
        return false;
    }
    match step {
        Step::Pipeline(p) => run_pipeline(run, p).await,
        Step::Group(s) => run_sequence(run, s).await,
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = std::io::pipe()?;
    Ok((OwnedFd::from(r), OwnedFd::from(w)))
}

fn open_output(path: &Path, append: bool) -> std::io::Result<OwnedFd> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(path)?;
    Ok(OwnedFd::from(f))
}

/// The three streams of one program after its redirects, applied in the order written.
fn streams(
    command: &Command,
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
) -> std::io::Result<(OwnedFd, OwnedFd, OwnedFd)> {
    let (mut i, mut o, mut e) = (stdin, stdout, stderr);
    for r in command.redirects() {
        match r {
            Redirect::Input(path) => i = OwnedFd::from(File::open(path)?),
            Redirect::Output {
                streams,
                path,
                append,
            } => {
                let f = open_output(path, *append)?;
                match streams {
                    Streams::Output => o = f,
                    Streams::Error => e = f,
                    Streams::Both => {
                        e = f.try_clone()?;
                        o = f;
                    }
                }
            }
            Redirect::ErrorToOutput => e = o.try_clone()?,
            Redirect::OutputToError => o = e.try_clone()?,
        }
    }
    Ok((i, o, e))
}

async fn run_pipeline(run: &Run, pipeline: &Pipeline) -> bool {
    let commands = pipeline.commands();
    let setup = (|| -> std::io::Result<_> {
        let (out_r, out_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        Ok((out_r, out_w, err_r, err_w))
    })();
    let Ok((out_r, out_w, err_r, err_w)) = setup else {
        run.exits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(StepExit {
                program: "pipeline".into(),
                code: None,
                error: Some("no pipe could be made".into()),
            });
        return false;
    };
    let readers = [
        process::capture(std::io::PipeReader::from(out_r), run.io_stdout.clone()),
        process::capture(std::io::PipeReader::from(err_r), run.io_stderr.clone()),
    ];
    let mut children = Vec::new();
    let mut next_stdin: Option<OwnedFd> = None;
    for (index, command) in commands.iter().enumerate() {
        let last = index + 1 == commands.len();
        let prepared = (|| -> std::io::Result<_> {
            let stdin = match next_stdin.take() {
                Some(fd) => fd,
                None => match run.stdin.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    Some(bytes) => {
                        let (r, w) = std::io::pipe()?;
                        drop(process::feed(w, bytes));
                        OwnedFd::from(r)
                    }
                    None => OwnedFd::from(File::open("/dev/null")?),
                },
            };
            let stdout = if last {
                out_w.try_clone()?
            } else {
                let (r, w) = pipe()?;
                next_stdin = Some(r);
                w
            };
            streams(command, stdin, stdout, err_w.try_clone()?)
        })();
        let name = command.name().to_string();
        let (i, o, e) = match prepared {
            Ok(s) => s,
            Err(error) => {
                children.push((name, Err(error.to_string())));
                continue;
            }
        };
        let env: Vec<(String, String)> = command
            .environment()
            .iter()
            .map(|a| (a.name.clone(), a.value.clone()))
            .collect();
        let spec = Spec {
            program: command.program(),
            arg0: command.argv().first().map_or(name.as_str(), String::as_str),
            args: command.arguments(),
            cwd: &run.directory,
            env,
            withheld: &run.withheld,
            base: run.confinement.as_ref().map(|c| c.env.as_slice()),
            stdin: Stdio::from(i),
            stdout: Stdio::from(o),
            stderr: Stdio::from(e),
        };
        let spawned = match &run.confinement {
            Some(c) => process::spawn_confined(spec, &c.confined),
            None => process::spawn(spec),
        };
        match spawned {
            Ok(child) => {
                if let Some(id) = child.id() {
                    run.groups
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(id);
                }
                children.push((name, Ok(child)));
            }
            Err(error) => children.push((name, Err(error.source.to_string()))),
        }
    }
    // Our copies of the write ends must close, or the readers never see the end.
    drop(out_w);
    drop(err_w);
    drop(next_stdin);
    let mut ok = false;
    for (name, child) in children {
        let exit = match child {
            Ok(mut child) => {
                let code = child.wait().await.ok().and_then(|s| s.code());
                StepExit {
                    program: name,
                    code,
                    error: None,
                }
            }
            Err(error) => StepExit {
                program: name,
                code: None,
                error: Some(error),
            },
        };
        ok = exit.code == Some(0);
        run.exits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(exit);
    }
    for r in readers {
        let _ = r.await;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmdline::{SystemEnvironment, compile};

    async fn run_line(
        line: &str,
        dir: &Path,
        stdin: Option<Vec<u8>>,
        deadline: Duration,
    ) -> (RunReport, String, String) {
        let env = SystemEnvironment::new(dir.to_path_buf());
        let plan = compile(line, &env).unwrap_or_else(|r| panic!("{line}: {}", r.message));
        let (out, err) = (process::shared(4096), process::shared(4096));
        let io = RunIo {
            stdout: out.clone(),
            stderr: err.clone(),
            stdin,
            withheld: process::Withheld::default(),
            confinement: None,
        };
        let report = execute(&plan, io, CancellationToken::new(), deadline).await;
        let text = |c: &SharedCapture| {
            String::from_utf8(c.lock().map(|c| c.kept()).unwrap_or_default()).unwrap_or_default()
        };
        (report, text(&out), text(&err))
    }

    // Verifies: EXEC-1
    #[tokio::test]
    async fn runner_follows_pipes_sequencing_and_redirects_exactly() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        let (report, out, err) = run_line(
            "printf 'b\\na\\n' | sort && echo ok || echo never; ls /nonexistent-x ; echo last",
            d,
            None,
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(out, "a\nb\nok\nlast\n");
        assert!(err.contains("nonexistent-x"), "{err}");
        let programs: Vec<&str> = report.exits.iter().map(|e| e.program.as_str()).collect();
        assert_eq!(
            programs,
            ["printf", "sort", "echo", "ls", "echo"],
            "echo never did not run"
        );
        let (_, out, _) =
            run_line("echo hi > out.txt 2>&1", d, None, Duration::from_secs(20)).await;
        assert_eq!(out, "");
        assert_eq!(
            std::fs::read_to_string(d.join("out.txt")).unwrap_or_default(),
            "hi\n"
        );
        let (_, out, _) = run_line(
            "echo '; rm -rf /' '$HOME'",
            d,
            None,
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(out, "; rm -rf / $HOME\n");
    }

    // Verifies: EXEC-1, RUNTOOL-6
    #[tokio::test]
    async fn runner_feeds_stdin_and_stops_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (_, out, _) = run_line(
            "wc -c",
            dir.path(),
            Some(b"12345".to_vec()),
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(out.trim(), "5");
        let (report, _, _) =
            run_line("sleep 30", dir.path(), None, Duration::from_millis(200)).await;
        assert_eq!(report.stopped, Some(Stopped::Deadline));
        assert_eq!(report.exits[0].code, None, "killed");
        assert!(report.elapsed < Duration::from_secs(10));
    }
}
