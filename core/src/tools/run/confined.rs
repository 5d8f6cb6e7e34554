//! Whether a line can run confined (RUN-17), and the confinement it runs under. The kernel
//! proves what the line cannot do; what is looked at here is only whether the line, as the
//! planner wrote it, could work inside the confinement at all, so that one that could not is put
//! to the person with the reason instead of failing: its directory, its programs and the paths
//! its words name.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::cmdline::Plan;
use crate::sandbox::run::{self as confinement, Homes, RunConfinement};

/// What the person is told a confined run could touch (the run card's words, RUN-18).
pub const TOUCHES: &str = "confined: it could write only inside the workspace (no .git, no file that configures your tools) and reach no network";
/// What the person is told an unconfined run could touch.
pub const UNCONFINED: &str = "not confined: it ran with your access";

/// Why the line cannot run confined in `workspace` (its links resolved), holding back the names
/// in `held_back`, or nothing when it can.
pub fn assess(workspace: &Path, plan: &Plan, held_back: &[&str]) -> Result<(), String> {
    let level = crate::sandbox::level();
    if !level.network_denial() {
        return Err(format!(
            "confinement is unavailable here ({})",
            level.describe()
        ));
    }
    let directory = plan.directory();
    if !directory.starts_with(workspace) {
        return Err(format!(
            "it runs in {}, outside the workspace",
            directory.display()
        ));
    }
    let policy = confinement::policy(workspace, &Homes::from_env(), workspace, held_back);
    for command in plan.commands() {
        let program = crate::workspace_file::real_path(command.program());
        if !confinement::reaches(&policy, &program) {
            return Err(format!(
                "it runs {}, which a confined run may not read",
                program.display()
            ));
        }
        for word in command.arguments() {
            if let Some(path) = named_path(directory, word)
                && !confinement::reaches(&policy, &path)
            {
                return Err(format!(
                    "it names {}, outside what a confined run may reach",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

/// The path an argument names where it leaves the directory it runs in: an absolute path (or an
/// option's `=` value that is one), or a relative one that climbs with `..`.
fn named_path(directory: &Path, word: &str) -> Option<PathBuf> {
    let value = match word.split_once('=') {
        Some((flag, value)) if flag.starts_with('-') => value,
        _ => word,
    };
    let path = Path::new(value);
    if path.is_absolute() {
        return Some(crate::sandbox::policy::lexical(path));
    }
    path.components()
        .any(|c| c == Component::ParentDir)
        .then(|| crate::sandbox::policy::lexical(&directory.join(path)))
}

/// The confinement of one run of `plan` in `workspace` (its links resolved), holding back the
/// names in `held_back`, built off the runtime's workers.
pub async fn prepare(
    workspace: PathBuf,
    plan: &Plan,
    held_back: Vec<&'static str>,
) -> Result<Arc<RunConfinement>, String> {
    let directory = plan.directory().to_path_buf();
    let built = tokio::task::spawn_blocking(move || {
        confinement::prepare(
            &workspace,
            &directory,
            &Homes::from_env(),
            &held_back,
            std::env::vars_os(),
        )
    })
    .await;
    match built {
        Ok(Ok(c)) => Ok(Arc::new(c)),
        Ok(Err(refusal)) => Err(refusal.to_string()),
        Err(e) => Err(format!("the confinement could not be built: {e}")),
    }
}
