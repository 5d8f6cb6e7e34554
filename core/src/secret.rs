//! Credentials held so that they are overwritten when dropped and never printed.
//!
//! A [`Secret`] is the only type a model key or a proxy password lives in between the moment it is
//! read and the moment it becomes a request header. It has no `Display`, its `Debug` says nothing,
//! and its bytes are zeroed when the last copy goes, rather than returned to the allocator intact.
//! [`disable_core_dumps`] closes the other way a key leaves memory: a crash writing it to disk.

use std::fmt;

use zeroize::Zeroizing;

/// A credential. Clone it freely: every copy is zeroed on drop.
#[derive(Clone)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(Zeroizing::new(value))
    }

    /// The credential itself. Call this only where it becomes an authentication header: anything
    /// else that holds the returned text keeps a copy nobody will zero.
    pub fn expose(&self) -> &str {
        self.0.as_str()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Stops this process from leaving a core file, so that a crash cannot write a credential to disk.
///
/// Call it before the first credential is read. Failure is logged rather than returned: the
/// process is still usable without it, and there is nothing a caller could do differently.
pub fn disable_core_dumps() {
    #[cfg(target_os = "linux")]
    linux::disable_core_dumps();
}

#[cfg(target_os = "linux")]
mod linux {
    pub(super) fn disable_core_dumps() {
        // A zero core size stops the kernel writing a core file; clearing the dumpable flag also
        // covers a core pattern that pipes to a handler (which ignores the size limit) and keeps
        // other processes of the same user from attaching to read our memory.
        let limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `setrlimit` reads the struct we pass and nothing else.
        if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &limit) } != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "could not set the core file size limit to zero"
            );
        }
        // SAFETY: `PR_SET_DUMPABLE` takes one integer argument; the rest are ignored.
        if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "could not mark the process as not dumpable"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: CRED-1
    #[test]
    fn secret_debug_never_shows_the_value() {
        let secret = Secret::new("sk-very-secret".to_owned());
        let shown = format!("{secret:?} {:?}", Some(secret.clone()));
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        assert_eq!(secret.expose(), "sk-very-secret");
    }

    // Verifies: CRED-1
    #[cfg(target_os = "linux")]
    #[test]
    fn disable_core_dumps_sets_the_core_limit_to_zero_and_clears_dumpable() {
        // The change is process-wide and cannot be undone for the hard limit, so it is made in a
        // forked child rather than in the test binary every other test shares. The child only
        // makes system calls and reports through its exit code.
        // SAFETY: the child calls no function that takes a lock before `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            disable_core_dumps();
            let mut limit = libc::rlimit {
                rlim_cur: 1,
                rlim_max: 1,
            };
            // SAFETY: `getrlimit` writes into the struct we own; `prctl` with
            // `PR_GET_DUMPABLE` takes no further arguments; `_exit` never returns.
            unsafe {
                let code = if libc::getrlimit(libc::RLIMIT_CORE, &mut limit) != 0 {
                    2
                } else if limit.rlim_cur != 0 || limit.rlim_max != 0 {
                    3
                } else if libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 {
                    4
                } else {
                    0
                };
                libc::_exit(code);
            }
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(waited, pid);
        assert!(libc::WIFEXITED(status), "child did not exit normally");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "2: getrlimit, 3: limit, 4: dumpable"
        );
    }
}
