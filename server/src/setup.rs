//! Building a session from what the process was given: settings layers, the credential, the six
//! facts about the machine, and where the audit trail is kept. Shared by `bravebot lsp`,
//! `bravebot exec` and `bravebot doctor`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use bravebot_core::model::ModelConfig;
use bravebot_core::secret::Secret;
use bravebot_core::session::SystemFacts;
use bravebot_core::settings::{self, Note, Settings, SettingsFile};
use serde_json::Value;

/// How a session is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opening {
    /// A new session.
    Fresh,
    /// A new session that leaves nothing behind: the recorded vetting choice is not read and no
    /// audit file is named (the caller makes it [`Session::incognito`](bravebot_core::session::Session::incognito)).
    Incognito,
    /// A recorded session taken up again under its own id.
    Resumed(String),
}

/// Opens a session in `cwd`: reads the settings layers (with the client's settings, if any: an
/// object holding `initializationOptions`' `model` and `questions`), builds the model client and names the audit file. `screen` is made once the id is known.
pub fn open_session(
    cwd: PathBuf,
    opening: Opening,
    client: Option<&Value>,
    egress: std::sync::Arc<bravebot_core::egress::Egress>,
    files: std::sync::Arc<dyn bravebot_core::files::Files>,
    screen: impl FnOnce(&str) -> std::sync::Arc<dyn bravebot_core::screen::Screen>,
    adjust: impl FnOnce(&mut Settings),
) -> bravebot_core::session::Session {
    let (mut settings, notes) = load_settings_for(&cwd, client, opening != Opening::Incognito);
    adjust(&mut settings);
    for note in &notes {
        tracing::info!("{note}");
    }
    let id = match &opening {
        Opening::Resumed(id) => id.clone(),
        _ => new_session_id(),
    };
    let check_model = check_model_config(&settings)
        .map(|c| std::sync::Arc::new(bravebot_core::model::ModelClient::new(c, egress.clone())));
    let model = bravebot_core::model::ModelClient::new(model_config(&settings), egress);
    let screen = screen(&id);
    let config = bravebot_core::session::SessionConfig {
        audit_log: if opening == Opening::Incognito {
            None
        } else {
            audit_path(&id)
        },
        id,
        facts: facts(&cwd),
        cwd,
        settings,
    };
    let mut session = bravebot_core::session::Session::new(config, model, screen, files);
    session.check_model = check_model;
    session
}

/// `HOME` decides where `~` is (CONTRACT §2).
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

pub fn home_settings_path() -> Option<PathBuf> {
    home().map(|h| h.join(".bravebot").join("settings.json"))
}

/// The state directory, `~/.bravebot`, where `HOME` names one.
pub fn state_dir() -> Option<bravebot_core::record::StateDir> {
    home().map(|h| bravebot_core::record::StateDir::in_home(&h))
}

/// Bytes of a workspace's settings file read at most.
const WORKSPACE_SETTINGS_LIMIT: u64 = 1 << 20;

/// The workspace's settings file through the confined reader, or why it was not read (nothing
/// when there is none).
fn read_workspace_settings(cwd: &Path, path: &Path) -> (Option<String>, Option<String>) {
    use bravebot_core::workspace_file::{self, Reach, Refusal};
    match workspace_file::read_blocking(path, &Reach::workspace(cwd), WORKSPACE_SETTINGS_LIMIT) {
        Ok(contents) => match String::from_utf8(contents.bytes) {
            Ok(text) => (Some(text), None),
            Err(_) => (None, Some("it is not UTF-8".into())),
        },
        Err(Refusal::Missing) => (None, None),
        Err(refusal) => (None, Some(refusal.reason())),
    }
}

/// Reads the settings layers for a workspace. Unreadable files are reported in the notes.
pub fn load_settings(cwd: &Path, client: Option<&Value>) -> (Settings, Vec<Note>) {
    load_settings_for(cwd, client, true)
}

/// [`load_settings`], reading the recorded vetting choice only where `read_vetting_choice` says:
/// an incognito session does not read it (seed 000).
pub fn load_settings_for(
    cwd: &Path,
    client: Option<&Value>,
    read_vetting_choice: bool,
) -> (Settings, Vec<Note>) {
    let home_path = home_settings_path();
    let workspace_path = cwd.join(".bravebot").join("settings.json");
    let home_text = home_path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    // The workspace's file comes with a cloned repository: read as any workspace file is (a
    // regular file inside the workspace after its links, within a bound), and a refusal is said.
    let (ws_text, ws_refused) = read_workspace_settings(cwd, &workspace_path);
    let ws_path = workspace_path.clone();
    let env = |name: &str| std::env::var(name).ok();
    let (mut resolved, mut notes) = settings::resolve(
        &env,
        client,
        home_path
            .zip(home_text.as_deref())
            .map(|(path, text)| SettingsFile { path, text }),
        ws_text.as_deref().map(|text| SettingsFile {
            path: workspace_path,
            text,
        }),
    );
    if let Some(error) = ws_refused {
        notes.push(Note::Unreadable {
            path: ws_path,
            error,
        });
    }
    // The recorded choice outranks the settings key (seed 000).
    let recorded = recorded_vetting_choice(home().as_deref(), read_vetting_choice);
    settings::apply_vetting_switches(&mut resolved, recorded.as_deref(), false, &mut notes);
    (resolved, notes)
}

/// The model settings of the environment and the home settings alone: what every session of
/// this process calls, whatever its workspace (a workspace never chooses the model, CONTRACT §2).
pub fn model_settings() -> settings::ModelSettings {
    let home_path = home_settings_path();
    let home_text = home_path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    let env = |name: &str| std::env::var(name).ok();
    let (resolved, _) = settings::resolve(
        &env,
        None,
        home_path
            .zip(home_text.as_deref())
            .map(|(path, text)| SettingsFile { path, text }),
        None,
    );
    resolved.model
}

/// The word in `~/.bravebot/vetting`, unless the session reads no recorded choice (an incognito
/// session, seed 000). The file is the person's own, one word: a read bounded like any record's.
fn recorded_vetting_choice(home: Option<&Path>, read_vetting_choice: bool) -> Option<String> {
    use std::io::Read;
    if !read_vetting_choice {
        return None;
    }
    let path = bravebot_core::record::StateDir::in_home(home?).vetting_path();
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(64)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Where the credential comes from, for doctor: a name, never the value.
pub fn credential_source(settings: &Settings) -> Option<String> {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty());
    if set("BRAVEBOT_API_KEY") {
        return Some("BRAVEBOT_API_KEY".into());
    }
    settings.model.api_key_env.clone().filter(|name| set(name))
}

/// The model configuration, reading the credential from the environment into a [`Secret`].
pub fn model_config(settings: &Settings) -> ModelConfig {
    let key = credential_source(settings)
        .and_then(|name| std::env::var(name).ok())
        .map(Secret::new);
    ModelConfig {
        api: settings.model.api,
        base_url: settings.model.base_url.clone(),
        name: settings.model.name.clone(),
        api_key: key,
    }
}

/// Where checks go when `vetting.model` names a model of their own (CHECK-12): that name, at its
/// own endpoint and wire format where it gives them, else the planner's. The credential is the
/// one its `apiKeyEnv` names; without one, the planner's goes only to the planner's own endpoint,
/// never to another.
pub fn check_model_config(settings: &Settings) -> Option<ModelConfig> {
    let check = settings.check_model.as_ref()?;
    let base_url = check
        .base_url
        .clone()
        .unwrap_or_else(|| settings.model.base_url.clone());
    let api_key = match &check.api_key_env {
        Some(name) => std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .map(Secret::new),
        None if base_url == settings.model.base_url => model_config(settings).api_key,
        None => None,
    };
    Some(ModelConfig {
        api: check.api.unwrap_or(settings.model.api),
        base_url,
        name: check.name.clone(),
        api_key,
    })
}

/// The six facts of the system prompt: the working directory is added by the turn loop.
pub fn facts(cwd: &Path) -> SystemFacts {
    SystemFacts {
        is_git: cwd.ancestors().any(|d| d.join(".git").exists()),
        platform: std::env::consts::OS.to_string(),
        os_version: os_version(),
        shell: std::env::var("SHELL").unwrap_or_else(|_| "unknown".into()),
        date: today(),
    }
}

fn os_version() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_string())
}

/// Today's date in UTC as YYYY-MM-DD, from the days since the epoch (Howard Hinnant's civil
/// calendar algorithm).
pub fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A session id unique across processes, so audit files never collide.
pub fn new_session_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "{secs:x}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Where a session's audit trail is kept: `~/.bravebot/sessions/<id>/audit.jsonl`.
pub fn audit_path(session_id: &str) -> Option<PathBuf> {
    home().map(|h| {
        h.join(".bravebot")
            .join("sessions")
            .join(session_id)
            .join("audit.jsonl")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: VET-25
    #[test]
    fn an_incognito_session_reads_no_recorded_vetting_choice() {
        let home = std::env::temp_dir().join(format!("bravebot-vetting-{}", std::process::id()));
        let state = bravebot_core::record::StateDir::in_home(&home);
        assert_eq!(recorded_vetting_choice(Some(&home), true), None);
        bravebot_core::vetting::write_record(&state, true).expect("written");
        assert_eq!(
            recorded_vetting_choice(Some(&home), true).as_deref(),
            Some("on\n")
        );
        assert_eq!(recorded_vetting_choice(Some(&home), false), None);
        assert_eq!(recorded_vetting_choice(None, true), None);
        std::fs::remove_dir_all(&home).expect("cleaned");
    }

    // Verifies: SET-6
    #[test]
    fn a_workspace_settings_file_is_read_only_as_a_bounded_regular_file_inside_it() {
        let dir = std::env::temp_dir().join(format!("bravebot-setup-{}", std::process::id()));
        let settings = dir.join(".bravebot").join("settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        let refused = |text: &str| {
            let (_, notes) = load_settings_for(&dir, None, false);
            notes.iter().any(|n| {
                matches!(n, Note::Unreadable { path, error } if *path == settings && error.contains(text))
            })
        };
        // A link to a device that never ends: read whole, it grew memory until the process died.
        std::os::unix::fs::symlink("/dev/zero", &settings).unwrap();
        assert!(refused("outside the workspace"));
        std::fs::remove_file(&settings).unwrap();
        std::fs::write(&settings, vec![b' '; 2 << 20]).unwrap();
        assert!(refused("larger than 1 MiB"));
        std::fs::write(&settings, r#"{"maxRounds": 7}"#).unwrap();
        let (resolved, notes) = load_settings_for(&dir, None, false);
        assert_eq!(resolved.max_rounds, 7, "{notes:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn civil_dates_from_epoch_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
