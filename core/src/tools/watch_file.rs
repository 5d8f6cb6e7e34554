//! `watch_file`: a standing watch on one existing file, offered to a session that keeps watches
//! (seed 004). The path is the only argument: no interval, no condition, nothing for the firing to
//! say. Nothing is asked that a read would not ask: a file a read may reach is one a watch may
//! name, and a path a read would refuse is refused here. What a firing then does is
//! [`crate::session::Session::watch_fired`]'s.

use serde_json::json;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::policy::PlannerText;

tool_args! {
    /// The arguments of `watch_file`, as the planner is shown them and as a call is read.
    pub struct Args {
        path: required String as Routing = json!({"type": "string", "description": "workspace-relative path of the one file to watch"});
    }
}

/// The tool's name, offered only where [`Offers`](crate::session::Offers) says.
pub const NAME: &str = "watch_file";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Arm a standing watch on one existing file in the workspace: when the file is written, this \
session is told with a turn of its own naming the path. The path is the only argument. A directory, a file that \
does not exist and a path a read would refuse are refused, and so is a watch in a session running a loop or \
already keeping as many watches as it keeps. Watches end with the session.",
        args: Args::specs(),
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let raw = match Args::read(call) {
        Ok(args) => args.path,
        Err(e) => return ToolOutput::error(e),
    };
    let session = call.session;
    let lexical = match super::confine(session, &raw) {
        Ok(p) => p,
        Err(super::Confinement::Outside) => {
            return ToolOutput::refused(format!(
                "{} is outside the places this session may reach",
                crate::paths::control_pictures(&raw)
            ));
        }
    };
    let shown = crate::paths::display_path(&session.cwd, &lexical);
    // The same look a read takes before it opens anything: within reach once links are
    // resolved, and a regular file.
    let real = match crate::workspace_file::locate(session, &lexical).await {
        Ok(real) => real,
        Err(refusal) => {
            call.record(
                Gate::Promote,
                Decision::Refused,
                format!("watch_file.path {shown}: {}", refusal.reason()),
            );
            return ToolOutput::refused(format!("{shown} cannot be watched: {}", refusal.reason()));
        }
    };
    let looked = real.clone();
    let token = match tokio::task::spawn_blocking(move || crate::watch::token_of(&looked)).await {
        Ok(t) => t,
        Err(e) => return ToolOutput::error(format!("the first look at {shown} failed: {e}")),
    };
    let armed = {
        let mut state = session.state();
        if state.looping.is_some() {
            Err(crate::watch::WatchRefusal::Looping)
        } else {
            state.watches.arm(real, shown.clone(), token)
        }
    };
    match armed {
        Ok(()) => {
            call.record(
                Gate::Promote,
                Decision::Allowed,
                format!("watch_file.path {shown}: a watch is armed"),
            );
            ToolOutput::ok(
                PlannerText::driver(format!(
                    "{shown} is watched: when it is written, this session is told in a turn of its own. The watch ends with the session."
                )),
                format!("watching {shown}"),
            )
        }
        Err(refusal) => {
            call.record(
                Gate::Promote,
                Decision::Refused,
                format!("watch_file.path {shown}: {refusal}"),
            );
            ToolOutput::refused(refusal.to_string())
        }
    }
}
