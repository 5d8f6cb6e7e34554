//! Every tool this build has, declared once (TOOL-6): its spec, what its routing can do to the
//! world, which delegates hold it, where it is offered and what runs it. [`specs`](super::specs),
//! [`specs_for`](super::specs_for), [`offered`](super::offered), the routing gate's effects,
//! [`dispatch`](super::dispatch) and each delegate kind's tools ([`held_by`](super::held_by)) are
//! all read off [`TABLE`]. Adding a tool is a file of its own and one entry here; no other file
//! names a tool by a string of its own.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::{
    Call, Effects, ToolOutput, ToolSpec, ask_user, diagnostics, edit_file, fetch_url, job_output,
    list_files, load_skill, lsp, read_file, read_git, read_output, run, schedule_next, search,
    spawn_agent, spawn_processor, todo_write, vet_content, watch_file, write_file,
};
use crate::delegation::{Holders, Kind};
use crate::screen::BoxFuture;
use crate::session::Offers;

/// Where a tool is offered to the planner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Offered {
    /// Every turn.
    Always,
    /// Every turn that was listed a skill.
    SkillListed,
    /// Every turn of a session whose editor answers for its diagnostics (TOOL-7).
    EditorDiagnostics,
    /// Only where the session keeps watches ([`Offers::watch_file`]).
    WatchFile,
    /// Only where the turn will be asked again ([`Offers::schedule_next`]).
    ScheduleNext,
}

impl Offered {
    /// Whether a turn with these offers is offered the tool, skills aside.
    pub(super) fn by(self, offers: Offers) -> bool {
        match self {
            Offered::Always | Offered::SkillListed | Offered::EditorDiagnostics => true,
            Offered::WatchFile => offers.watch_file,
            Offered::ScheduleNext => offers.schedule_next,
        }
    }
}

/// What runs a call whose arguments matched the tool's spec and passed the routing gate.
pub(super) type Runs = for<'a, 'b> fn(&'a Call<'b>) -> BoxFuture<'a, ToolOutput>;

/// One tool, as this build has it.
pub(super) struct ToolDef {
    /// What the planner is shown: name, description and arguments with their roles.
    pub(super) spec: fn() -> ToolSpec,
    /// What a call with these arguments can do to the world (CTX-2).
    pub(super) effects: fn(&Map<String, Value>) -> Effects,
    /// Which delegates hold it (DELEG-2).
    pub(super) held_by: Holders,
    pub(super) offered: Offered,
    pub(super) run: Runs,
}

/// Every tool, in the order the planner is shown them.
const TABLE: &[ToolDef] = &[
    ToolDef {
        spec: read_file::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Reader),
        offered: Offered::Always,
        run: |call| Box::pin(read_file::run(call)),
    },
    ToolDef {
        spec: list_files::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Reader),
        offered: Offered::Always,
        run: |call| Box::pin(list_files::run(call)),
    },
    ToolDef {
        spec: search::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Reader),
        offered: Offered::Always,
        run: |call| Box::pin(search::run(call)),
    },
    ToolDef {
        spec: read_git::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Reader),
        offered: Offered::Always,
        run: |call| Box::pin(read_git::run(call)),
    },
    // Asks the person's editor; starts nothing and reads no file.
    ToolDef {
        spec: diagnostics::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Reader),
        offered: Offered::EditorDiagnostics,
        run: |call| Box::pin(diagnostics::run(call)),
    },
    // A language server comes with running programs: a checker's and a worker's.
    ToolDef {
        spec: lsp::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Checker),
        offered: Offered::Always,
        run: |call| Box::pin(lsp::run(call)),
    },
    ToolDef {
        spec: write_file::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::From(Kind::Worker),
        offered: Offered::Always,
        run: |call| Box::pin(write_file::run(call)),
    },
    ToolDef {
        spec: edit_file::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::From(Kind::Worker),
        offered: Offered::Always,
        run: |call| Box::pin(edit_file::run(call)),
    },
    ToolDef {
        spec: run::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::From(Kind::Checker),
        offered: Offered::Always,
        run: |call| Box::pin(run::run(call)),
    },
    ToolDef {
        spec: read_output::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::From(Kind::Checker),
        offered: Offered::Always,
        run: |call| Box::pin(read_output::run(call)),
    },
    ToolDef {
        spec: job_output::spec,
        effects: job_output::effects,
        held_by: Holders::From(Kind::Checker),
        offered: Offered::Always,
        run: |call| Box::pin(job_output::run(call)),
    },
    // Sends quarantined bytes to a model on the planner's word alone.
    ToolDef {
        spec: spawn_processor::spec,
        effects: |_| Effects::Unasked,
        held_by: Holders::From(Kind::Worker),
        offered: Offered::Always,
        run: |call| Box::pin(spawn_processor::run(call)),
    },
    // Never a delegate's: its question would be the person's, about content they never asked to
    // see, in the middle of work they are not reading (seed 000).
    ToolDef {
        spec: vet_content::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::Nobody,
        offered: Offered::Always,
        run: |call| Box::pin(vet_content::run(call)),
    },
    // Never a delegate's: a host to reach.
    ToolDef {
        spec: fetch_url::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::Nobody,
        offered: Offered::Always,
        run: |call| Box::pin(fetch_url::run(call)),
    },
    // Never a delegate's: a task list on the person's screen.
    ToolDef {
        spec: todo_write::spec,
        effects: |_| Effects::None,
        held_by: Holders::Nobody,
        offered: Offered::Always,
        run: |call| Box::pin(std::future::ready(todo_write::run(call))),
    },
    // Never a delegate's: a question of its own.
    ToolDef {
        spec: ask_user::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::Nobody,
        offered: Offered::Always,
        run: |call| Box::pin(ask_user::run(call)),
    },
    ToolDef {
        spec: spawn_agent::spec,
        effects: |_| Effects::EachAsked,
        held_by: Holders::Delegating,
        offered: Offered::Always,
        run: |call| Box::pin(spawn_agent::run(call)),
    },
    ToolDef {
        spec: load_skill::spec,
        effects: |_| Effects::None,
        held_by: Holders::From(Kind::Reader),
        offered: Offered::SkillListed,
        run: |call| Box::pin(load_skill::run(call)),
    },
    // The two that only mean something to a session the person keeps: never a delegate's.
    ToolDef {
        spec: watch_file::spec,
        effects: |_| Effects::Unasked,
        held_by: Holders::Nobody,
        offered: Offered::WatchFile,
        run: |call| Box::pin(watch_file::run(call)),
    },
    ToolDef {
        spec: schedule_next::spec,
        effects: |_| Effects::Unasked,
        held_by: Holders::Nobody,
        offered: Offered::ScheduleNext,
        run: |call| Box::pin(std::future::ready(schedule_next::run(call))),
    },
];

/// A tool of the table with its spec built.
pub(super) struct Tool {
    pub(super) def: &'static ToolDef,
    pub(super) spec: ToolSpec,
}

/// The table with every spec built once: a turn's tool list, each call's dispatch and each
/// argument's role borrow from it rather than building every tool's schema again.
static BUILT: LazyLock<Vec<Tool>> = LazyLock::new(|| {
    TABLE
        .iter()
        .map(|def| Tool {
            def,
            spec: (def.spec)(),
        })
        .collect()
});

/// Every tool, in the order the planner is shown them.
pub(super) fn all() -> &'static [Tool] {
    &BUILT
}

/// The tool of this name, if this build has one.
pub(super) fn find(name: &str) -> Option<&'static Tool> {
    all().iter().find(|t| t.spec.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delegation::Definition;

    /// Words that are spelled like a tool but name something else, each with how often its file
    /// says it: the question kind `run` on the wire, `read_git`'s own `search` query, and the
    /// directory language servers are installed under.
    const HOMONYMS: &[(&str, &str, usize)] = &[
        ("screen.rs", "run", 1),
        ("tools/read_git.rs", "search", 5),
        ("language/mod.rs", "lsp", 1),
    ];

    /// Each line of `text` (the file `rel` under `core/src`) that spells one of `names` as a
    /// string literal, outside the table, the tool's own file, comments and test modules.
    fn listings(rel: &str, text: &str, names: &[&str]) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut lines = text.lines().enumerate();
        while let Some((at, line)) = lines.next() {
            if line == "#[cfg(test)]" {
                // A test module or item: up to its closing brace at the margin, or its one line.
                if lines.next().is_some_and(|(_, next)| !next.ends_with(';')) {
                    for (_, inner) in lines.by_ref() {
                        if inner == "}" {
                            break;
                        }
                    }
                }
                continue;
            }
            if line.trim_start().starts_with("//") {
                continue;
            }
            for name in names {
                if line.contains(&format!("\"{name}\"")) && rel != format!("tools/{name}.rs") {
                    out.push((at + 1, (*name).to_string()));
                }
            }
        }
        out
    }

    // Verifies: TOOL-1, GATE-1, TOOL-8
    #[test]
    fn every_tool_the_planner_is_shown_is_as_recorded() {
        // Names, order, descriptions, schemas and each argument's role and place, as the planner
        // and the routing gate see them: a change to any of them is a change to this file.
        let shown: Vec<Value> = all()
            .iter()
            .map(|t| {
                let schema = t.spec.schema();
                // In the spec's order, which an unknown argument's error lists them in.
                let args: Vec<String> = t
                    .spec
                    .args
                    .iter()
                    .map(|a| {
                        let required = if a.required { ", required" } else { "" };
                        format!("{}: {:?}{required}", a.name, a.role)
                    })
                    .collect();
                serde_json::json!({
                    "name": schema.name,
                    "description": schema.description,
                    "parameters": schema.parameters,
                    "args": args,
                    "offered": format!("{:?}", t.def.offered),
                    "heldBy": format!("{:?}", t.def.held_by),
                })
            })
            .collect();
        // Keys sorted, whatever order serde_json keeps them in: a build that turns on its
        // `preserve_order` (the whole workspace's does) writes the same file.
        let text = serde_json::to_string_pretty(&sorted(Value::Array(shown))).expect("json") + "\n";
        expect_test::expect_file!["snapshots/tools.json"].assert_eq(&text);
    }

    /// The value with every object's keys in sorted order, walked with a stack of its own.
    fn sorted(value: Value) -> Value {
        // Each frame is a value still to be rebuilt and, once its children are, where it goes.
        enum Frame {
            Visit(Value),
            Array(usize),
            Object(Vec<String>),
        }
        let mut work = vec![Frame::Visit(value)];
        let mut done: Vec<Value> = Vec::new();
        while let Some(frame) = work.pop() {
            match frame {
                Frame::Visit(Value::Array(items)) => {
                    work.push(Frame::Array(items.len()));
                    work.extend(items.into_iter().rev().map(Frame::Visit));
                }
                Frame::Visit(Value::Object(map)) => {
                    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                    let (keys, values): (Vec<String>, Vec<Value>) = entries.into_iter().unzip();
                    work.push(Frame::Object(keys));
                    work.extend(values.into_iter().rev().map(Frame::Visit));
                }
                Frame::Visit(other) => done.push(other),
                Frame::Array(n) => {
                    let items = done.split_off(done.len() - n);
                    done.push(Value::Array(items));
                }
                Frame::Object(keys) => {
                    let values = done.split_off(done.len() - keys.len());
                    done.push(Value::Object(keys.into_iter().zip(values).collect()));
                }
            }
        }
        done.pop().unwrap_or(Value::Null)
    }

    // Verifies: TOOL-6
    #[test]
    fn no_tool_is_named_outside_the_table_and_its_own_file() {
        let names: Vec<&str> = all().iter().map(|t| t.spec.name).collect();
        assert_eq!(names.len(), TABLE.len(), "one entry, one name");
        for (at, name) in names.iter().enumerate() {
            assert!(!names[..at].contains(name), "{name} is declared twice");
        }
        // The scan sees a listing where one is, and none in a test module or a comment.
        let planted = "fn f() {}\n#[cfg(test)]\nmod tests {\n    \"read_file\"\n}\n// \"run\"\nconst A: &str = \"run\";\n";
        assert_eq!(listings("x.rs", planted, &names), [(7, "run".to_string())]);
        assert!(listings("tools/run.rs", planted, &names).is_empty());

        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("source directory") {
                let path = entry.expect("entry").path();
                let rel = path.strip_prefix(&src).expect("inside").to_string_lossy();
                let rel = rel.replace('\\', "/");
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && rel != "tools/table.rs"
                    && !rel.ends_with("/tests.rs")
                {
                    let text = std::fs::read_to_string(&path).expect("source");
                    let mut here = listings(&rel, &text, &names);
                    for (file, name, times) in HOMONYMS {
                        if rel == *file && here.iter().filter(|(_, n)| n == name).count() == *times
                        {
                            here.retain(|(_, n)| n != name);
                        }
                    }
                    found.extend(
                        here.into_iter()
                            .map(|(line, name)| format!("{rel}:{line} {name}")),
                    );
                }
            }
        }
        found.sort();
        assert!(
            found.is_empty(),
            "tools named outside tools/table.rs and their own files: {found:#?}"
        );
    }

    // Verifies: DELEG-2
    #[test]
    fn each_kind_holds_its_table_and_none_is_offered_a_question_a_plan_or_a_host() {
        let reader = super::super::held_by(Kind::Reader);
        assert!(reader.contains(&"read_file") && reader.contains(&"search"));
        assert!(!reader.contains(&"run") && !reader.contains(&"lsp"));
        assert!(!reader.contains(&"write_file"));
        let checker = super::super::held_by(Kind::Checker);
        assert!(checker.contains(&"run") && checker.contains(&"lsp"));
        assert!(!checker.contains(&"write_file") && !checker.contains(&"edit_file"));
        let worker = super::super::held_by(Kind::Worker);
        assert!(worker.contains(&"write_file") && worker.contains(&"run"));
        for kind in Kind::ALL {
            for never in [
                "vet_content",
                "ask_user",
                "todo_write",
                "fetch_url",
                "watch_file",
                "schedule_next",
            ] {
                assert!(
                    !super::super::held_by(kind).contains(&never),
                    "{kind:?} holds {never}"
                );
            }
        }
    }

    // Verifies: DELEG-8
    #[test]
    fn a_definition_keeps_only_the_worker_tools_it_names() {
        let d = Definition {
            name: "fixer".into(),
            description: "fixes".into(),
            tools: Some(vec![
                "read_file".into(),
                "edit_file".into(),
                "fetch_url".into(),
            ]),
            model: None,
            refused_model: None,
            body: String::new(),
        };
        let (tools, may) = super::super::kept_by(&d);
        assert_eq!(tools, vec!["read_file", "edit_file"]);
        assert!(!may, "spawn_agent was not named");
    }

    // Verifies: DELEG-20
    #[test]
    fn a_definition_keeps_an_mcp_server_only_where_its_tools_name_it_whole() {
        let mut d = Definition {
            name: "mailer".into(),
            description: "sends".into(),
            tools: None,
            model: None,
            refused_model: None,
            body: String::new(),
        };
        assert!(
            d.keeps_server("gmail") && d.keeps_server("notes"),
            "no tools: all"
        );
        d.tools = Some(vec![
            "read_file".into(),
            "mcp__gmail__*".into(),
            "mcp__notes__search".into(),
        ]);
        assert!(d.keeps_server("gmail"));
        assert!(
            !d.keeps_server("notes"),
            "one tool does not name the server"
        );
        assert!(!d.keeps_server("gmai"));
        assert!(Kind::Worker.calls_servers());
        assert!(!Kind::Reader.calls_servers() && !Kind::Checker.calls_servers());
    }
}
