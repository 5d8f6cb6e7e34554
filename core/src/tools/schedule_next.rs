//! `schedule_next`: says when this turn should be asked again (seed 004). Offered only to a turn
//! that will be: a tick of a self-paced loop, or a line the person typed in a session that keeps
//! loops (where the call starts a self-paced loop over that line). `delay_seconds` and `noop` are
//! routing and required; `reason` is content and goes to the person's screen only.

use serde_json::{Value, json};

use super::{ArgRole, ArgSpec, Call, ToolOutput, ToolSpec};
use crate::kernel::policy::PlannerText;
use crate::looping::{Schedule, clamp};

/// The tool's name, offered only where [`Offers`](crate::session::Offers) says.
pub const NAME: &str = "schedule_next";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Say when this turn should be asked again: the person's line is sent again unchanged after \
the delay. The delay is held between the session's minimum (a minute unless set lower) and an hour, and the \
answer says the delay you get. `noop` says whether this look found nothing new. Not calling it in a loop's tick \
ends the loop.",
        args: vec![
            ArgSpec {
                name: "delay_seconds",
                role: ArgRole::Routing,
                required: true,
                schema: json!({"type": "integer", "minimum": 0, "description": "seconds until the next look"}),
            },
            ArgSpec {
                name: "noop",
                role: ArgRole::Routing,
                required: true,
                schema: json!({"type": "boolean", "description": "true when this look found nothing"}),
            },
            ArgSpec {
                name: "reason",
                role: ArgRole::Content,
                required: false,
                schema: json!({"type": "string", "description": "what you are waiting on; shown to the person"}),
            },
        ],
    }
}

pub fn run(call: &Call<'_>) -> ToolOutput {
    let asked = match call.uint_arg("delay_seconds") {
        Ok(Some(n)) => n,
        Ok(None) => return ToolOutput::error("schedule_next needs the argument `delay_seconds`"),
        Err(e) => return ToolOutput::error(e),
    };
    let Some(noop) = call.args.get("noop").and_then(Value::as_bool) else {
        return ToolOutput::error("argument `noop` of schedule_next must be true or false");
    };
    let reason = call
        .str_arg("reason")
        .ok()
        .flatten()
        .unwrap_or_default()
        .to_string();
    let delay = clamp(asked, call.session.settings.loop_min_seconds);
    let quiet = {
        let mut state = call.session.state();
        state.scheduled = Some(Schedule {
            delay_seconds: delay,
            noop,
        });
        state.looping.as_ref().map_or(0, |l| l.quiet_ticks) + u64::from(noop)
    };
    let held = if delay == asked {
        String::new()
    } else {
        format!(" (asked for {asked}; held between the minimum and an hour)")
    };
    let summary = if reason.is_empty() {
        format!("next look in {delay} s; quiet ticks: {quiet}")
    } else {
        format!("next look in {delay} s: {reason}; quiet ticks: {quiet}")
    };
    ToolOutput::ok(
        PlannerText::driver(format!(
            "the next look is in {delay} seconds{held}; the person's line will be sent again unchanged"
        )),
        summary,
    )
}
