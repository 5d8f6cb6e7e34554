//! The Landlock backend: the ruleset for a [`Plan`], built in the parent through the `landlock`
//! crate, and the two system calls that put the child under it between `fork` and `exec`.
//!
//! The ruleset handles every filesystem right the kernel carries (narrowed to what the crate
//! knows), so a right the policy never mentions is denied rather than left unchecked; the network
//! rights when the network is denied; and the signal scope always, with abstract unix sockets
//! scoped too when the network is denied (ABI 6 and later).

use std::os::fd::{AsRawFd, OwnedFd};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::policy::{Plan, Refusal, Rights};

/// The Landlock ABI this kernel offers: 0 when it has none.
pub fn abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: asking for the ABI version passes no pointer the kernel writes through.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

/// Builds the ruleset for `plan`; every rule is installed, or the plan is refused naming the path.
pub fn ruleset(plan: &Plan) -> Result<OwnedFd, Refusal> {
    let abi = ABI::from(i32::try_from(plan.abi).unwrap_or(i32::MAX));
    let failed = |e: &dyn std::fmt::Display| Refusal::Ruleset(e.to_string());
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let file = AccessFs::from_file(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| failed(&e))?;
    if plan.network_denied {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| failed(&e))?;
    }
    let scopes = if plan.network_denied {
        Scope::from_all(abi)
    } else {
        Scope::from_all(abi) & Scope::Signal
    };
    if !scopes.is_empty() {
        ruleset = ruleset.scope(scopes).map_err(|e| failed(&e))?;
    }
    let mut created = ruleset.create().map_err(|e| failed(&e))?;
    for rule in &plan.rules {
        let refuse =
            |e: &dyn std::fmt::Display| Refusal::NotInstalled(rule.path.clone(), e.to_string());
        let fd = PathFd::new(&rule.path).map_err(|e| refuse(&e))?;
        let access = match rule.rights {
            Rights::ReadDirectory => read,
            Rights::WriteDirectory => all,
            Rights::ReadFile => read & file,
            Rights::WriteFile => file,
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| refuse(&e))?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or(Refusal::Unavailable)
}

/// The seccomp filter of a process that may make no socket: `socket(2)` fails with `EACCES`, and
/// `io_uring_setup(2)` with `EPERM` (a ring could make one without the system call). Every other
/// call is left to Landlock; a call from another architecture's table ends the process.
pub fn no_sockets() -> Result<seccompiler::BpfProgram, Refusal> {
    use seccompiler::{SeccompAction, SeccompFilter, TargetArch};
    let failed = |e: &dyn std::fmt::Display| Refusal::Ruleset(format!("seccomp: {e}"));
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| failed(&e))?;
    let mut calls = vec![libc::SYS_socket, libc::SYS_io_uring_setup];
    // The x32 table of x86_64 shares its architecture with the 64-bit one: its numbers too.
    #[cfg(target_arch = "x86_64")]
    {
        const X32: i64 = 0x4000_0000;
        calls.extend([libc::SYS_socket | X32, libc::SYS_io_uring_setup | X32]);
    }
    let rules = calls.into_iter().map(|c| (c, Vec::new())).collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|e| failed(&e))?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| failed(&e))
}

/// Arranges for the child `command` starts to restrict itself to `ruleset` (and `filter`, when
/// there is one) before it runs its program. A child that cannot is not run: `spawn` fails with
/// the error.
pub fn apply(
    command: &mut std::process::Command,
    ruleset: &OwnedFd,
    filter: Option<&seccompiler::BpfProgram>,
) {
    use std::os::unix::process::CommandExt;
    let raw = ruleset.as_raw_fd();
    let filter: Option<seccompiler::BpfProgram> = filter.cloned();
    // SAFETY: the closure makes system calls only, all async-signal-safe, and allocates nothing
    // (the filter was built and copied in the parent). The descriptor stays open in the parent
    // until the spawn returns (the caller holds it) and is close-on-exec, so the program never
    // holds it.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, raw, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(filter) = &filter {
                seccompiler::apply_filter(filter)
                    .map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::sandbox::policy::Rule;

    // Verifies: SANDBOX-5
    #[test]
    fn a_grant_that_cannot_be_installed_refuses_the_plan_naming_its_path() {
        let dir = tempfile::tempdir().expect("a directory");
        // Planned while it was there, gone by the time the ruleset is built.
        let gone: PathBuf = dir.path().join("gone");
        let plan = Plan {
            rules: vec![
                Rule {
                    path: dir.path().to_path_buf(),
                    rights: Rights::ReadDirectory,
                },
                Rule {
                    path: gone.clone(),
                    rights: Rights::WriteDirectory,
                },
            ],
            left_out: Vec::new(),
            held_back: Vec::new(),
            no_new_entries: Vec::new(),
            network_denied: false,
            sockets_denied: false,
            abi: abi(),
        };
        match ruleset(&plan) {
            Err(Refusal::NotInstalled(path, _)) => assert_eq!(path, gone),
            Err(other) => panic!("refused for another reason: {other}"),
            Ok(_) => panic!("a plan with a grant that could not be installed was built"),
        }
    }
}
