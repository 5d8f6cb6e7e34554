//! Which certificate authorities the client trusts, from `SSL_CERT_FILE` and `SSL_CERT_DIR`.
//!
//! Either variable replaces the built-in set rather than adding to it: somebody who points them at
//! a private authority has ruled the public ones out on purpose, and every other client on the
//! machine reads them that way. The two are read independently, so one that yields nothing does
//! not discard what the other held; when both together yield nothing, nothing is trusted rather
//! than the built-in set quietly coming back.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Files larger than this are not certificate bundles; skipping them keeps a mistaken path from
/// reading a disk image into memory at startup.
const MAX_BUNDLE_BYTES: u64 = 16 * 1024 * 1024;

/// One variable that named certificates, and what it yielded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateOrigin {
    pub variable: &'static str,
    pub path: PathBuf,
    /// Certificates accepted from it.
    pub count: usize,
    /// Why it yielded less than it might have: unreadable, or entries that were not certificates.
    pub problem: Option<String>,
}

/// The certificate authorities in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CertificateSource {
    /// Neither variable is set: the authorities shipped with the build.
    BuiltIn,
    /// What the variables named, which replaces the built-in set.
    Environment(Vec<CertificateOrigin>),
    /// The variables were set and yielded nothing, so no authority is trusted and every https
    /// request fails.
    NothingTrusted(Vec<CertificateOrigin>),
}

impl fmt::Display for CertificateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertificateSource::BuiltIn => {
                f.write_str("built-in authorities (SSL_CERT_FILE and SSL_CERT_DIR not set)")
            }
            CertificateSource::Environment(origins) => {
                for (i, origin) in origins.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(
                        f,
                        "{} {} ({} certificate{})",
                        origin.variable,
                        origin.path.display(),
                        origin.count,
                        if origin.count == 1 { "" } else { "s" }
                    )?;
                    if let Some(problem) = &origin.problem {
                        write!(f, ", {problem}")?;
                    }
                }
                Ok(())
            }
            CertificateSource::NothingTrusted(origins) => {
                f.write_str("nothing trusted: ")?;
                for (i, origin) in origins.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{} yielded no certificates", origin.path.display())?;
                    if let Some(problem) = &origin.problem {
                        write!(f, " ({problem})")?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// The authorities to hand the client, and the fact to report.
pub(crate) struct Trust {
    pub(crate) source: CertificateSource,
    /// Empty for [`CertificateSource::BuiltIn`] and [`CertificateSource::NothingTrusted`].
    pub(crate) certificates: Vec<CertificateDer<'static>>,
}

impl Trust {
    pub(crate) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Trust {
        let named = |variable: &str| env(variable).filter(|value| !value.trim().is_empty());
        let file = named("SSL_CERT_FILE");
        let dir = named("SSL_CERT_DIR");
        if file.is_none() && dir.is_none() {
            return Trust {
                source: CertificateSource::BuiltIn,
                certificates: Vec::new(),
            };
        }

        let mut seen = HashSet::new();
        let mut certificates = Vec::new();
        let mut origins = Vec::new();
        if let Some(path) = file {
            let path = PathBuf::from(path);
            let (found, problem) = read_bundle(&path);
            origins.push(keep_new(
                "SSL_CERT_FILE",
                path,
                found,
                problem,
                &mut seen,
                &mut certificates,
            ));
        }
        if let Some(path) = dir {
            // OpenSSL allows several directories separated by `:`; each is read in turn.
            for part in path.split(':').filter(|p| !p.is_empty()) {
                let path = PathBuf::from(part);
                let (found, problem) = read_directory(&path);
                origins.push(keep_new(
                    "SSL_CERT_DIR",
                    path,
                    found,
                    problem,
                    &mut seen,
                    &mut certificates,
                ));
            }
        }

        let source = if certificates.is_empty() {
            CertificateSource::NothingTrusted(origins)
        } else {
            CertificateSource::Environment(origins)
        };
        Trust {
            source,
            certificates,
        }
    }
}

/// Records one origin, keeping only certificates not already taken from another.
fn keep_new(
    variable: &'static str,
    path: PathBuf,
    found: Vec<CertificateDer<'static>>,
    problem: Option<String>,
    seen: &mut HashSet<Vec<u8>>,
    certificates: &mut Vec<CertificateDer<'static>>,
) -> CertificateOrigin {
    let count = found.len();
    for cert in found {
        if seen.insert(cert.as_ref().to_vec()) {
            certificates.push(cert);
        }
    }
    CertificateOrigin {
        variable,
        path,
        count,
        problem,
    }
}

fn read_bundle(path: &Path) -> (Vec<CertificateDer<'static>>, Option<String>) {
    match read_capped(path) {
        Ok(bytes) => parse_bundle(&bytes),
        Err(problem) => (Vec::new(), Some(problem)),
    }
}

/// Reads every regular file in a directory (following links, as the hashed layout `c_rehash`
/// makes is all links) and keeps what parses; files that are not PEM simply yield nothing.
fn read_directory(path: &Path) -> (Vec<CertificateDer<'static>>, Option<String>) {
    let entries = match fs::read_dir(path) {
        Ok(entries) => entries,
        Err(err) => return (Vec::new(), Some(format!("cannot be read: {err}"))),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| fs::metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    // Sorted so that the count and any skipped entry are the same from one run to the next.
    paths.sort();
    let mut seen = HashSet::new();
    let mut certificates = Vec::new();
    let mut rejected = 0;
    for file in paths {
        let Ok(bytes) = read_capped(&file) else {
            continue;
        };
        let (found, problem) = parse_bundle(&bytes);
        if problem.is_some() {
            rejected += 1;
        }
        for cert in found {
            if seen.insert(cert.as_ref().to_vec()) {
                certificates.push(cert);
            }
        }
    }
    let problem = (rejected > 0).then(|| format!("{rejected} file(s) held unusable certificates"));
    (certificates, problem)
}

fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    let meta = fs::metadata(path).map_err(|err| format!("cannot be read: {err}"))?;
    if !meta.is_file() {
        return Err("is not a file".to_owned());
    }
    if meta.len() > MAX_BUNDLE_BYTES {
        return Err("is too large to be a certificate bundle".to_owned());
    }
    fs::read(path).map_err(|err| format!("cannot be read: {err}"))
}

/// Parses PEM certificates, keeping each one rustls accepts as a trust anchor. One bad entry is
/// skipped rather than failing the bundle, because the client would otherwise refuse to start.
fn parse_bundle(bytes: &[u8]) -> (Vec<CertificateDer<'static>>, Option<String>) {
    let mut accepted: Vec<CertificateDer<'static>> = Vec::new();
    let mut rejected = 0usize;
    for item in CertificateDer::pem_slice_iter(bytes) {
        match item {
            Ok(cert) => {
                let mut probe = rustls::RootCertStore::empty();
                if accepted.contains(&cert) {
                    // A bundle listing a root twice still trusts one authority.
                } else if probe.add(cert.clone()).is_ok() {
                    accepted.push(cert);
                } else {
                    rejected += 1;
                }
            }
            Err(_) => rejected += 1,
        }
    }
    let problem =
        (rejected > 0).then(|| format!("{rejected} entr(ies) were not usable certificates"));
    (accepted, problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: EGRESS-7
    #[test]
    fn no_variables_means_built_in_authorities() {
        let trust = Trust::from_env(&|_| None);
        assert_eq!(trust.source, CertificateSource::BuiltIn);
    }

    // Verifies: EGRESS-7
    #[test]
    fn empty_file_and_no_dir_trusts_nothing_and_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("empty.pem");
        fs::write(&file, b"").unwrap();
        let file_text = file.to_string_lossy().into_owned();
        let trust = Trust::from_env(&|name| (name == "SSL_CERT_FILE").then(|| file_text.clone()));
        assert!(trust.certificates.is_empty());
        let shown = trust.source.to_string();
        assert!(matches!(trust.source, CertificateSource::NothingTrusted(_)));
        assert!(
            shown.starts_with("nothing trusted: ") && shown.contains(&file_text),
            "{shown}"
        );
        assert!(shown.contains("yielded no certificates"), "{shown}");
    }

    // Verifies: EGRESS-7
    #[test]
    fn missing_file_and_empty_dir_trust_nothing_rather_than_the_built_ins() {
        let dir = tempfile::tempdir().unwrap();
        let dir_text = dir.path().to_string_lossy().into_owned();
        let trust = Trust::from_env(&|name| match name {
            "SSL_CERT_FILE" => Some("/nonexistent/bundle.pem".to_owned()),
            "SSL_CERT_DIR" => Some(dir_text.clone()),
            _ => None,
        });
        let CertificateSource::NothingTrusted(origins) = &trust.source else {
            panic!("expected nothing trusted, got {:?}", trust.source);
        };
        assert_eq!(origins.len(), 2);
        assert!(
            origins[0]
                .problem
                .as_deref()
                .unwrap()
                .contains("cannot be read")
        );
    }

    #[test]
    fn garbage_pem_yields_no_certificate() {
        let (found, problem) =
            parse_bundle(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        assert!(found.is_empty());
        assert!(problem.is_some());
    }

    /// A public root (ISRG Root X2), used only as a well-formed certificate to load.
    const ROOT_PEM: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIICGzCCAaGgAwIBAgIQQdKd0XLq7qeAwSxs6S+HUjAKBggqhkjOPQQDAzBPMQsw\n\
CQYDVQQGEwJVUzEpMCcGA1UEChMgSW50ZXJuZXQgU2VjdXJpdHkgUmVzZWFyY2gg\n\
R3JvdXAxFTATBgNVBAMTDElTUkcgUm9vdCBYMjAeFw0yMDA5MDQwMDAwMDBaFw00\n\
MDA5MTcxNjAwMDBaME8xCzAJBgNVBAYTAlVTMSkwJwYDVQQKEyBJbnRlcm5ldCBT\n\
ZWN1cml0eSBSZXNlYXJjaCBHcm91cDEVMBMGA1UEAxMMSVNSRyBSb290IFgyMHYw\n\
EAYHKoZIzj0CAQYFK4EEACIDYgAEzZvVn4CDCuwJSvMWSj5cz3es3mcFDR0HttwW\n\
+1qLFNvicWDEukWVEYmO6gbf9yoWHKS5xcUy4APgHoIYOIvXRdgKam7mAHf7AlF9\n\
ItgKbppbd9/w+kHsOdx1ymgHDB/qo0IwQDAOBgNVHQ8BAf8EBAMCAQYwDwYDVR0T\n\
AQH/BAUwAwEB/zAdBgNVHQ4EFgQUfEKWrt5LSDv6kviejM9ti6lyN5UwCgYIKoZI\n\
zj0EAwMDaAAwZQIwe3lORlCEwkSHRhtFcP9Ymd70/aTSVaYgLXTWNLxBo1BfASdW\n\
tL4ndQavEi51mI38AjEAi/V3bNTIZargCyzuFJ0nN6T5U6VR5CmD1/iQMVtCnwr1\n\
/q4AaOeMSQ+2b1tbFfLn\n\
-----END CERTIFICATE-----\n\
";

    // Verifies: EGRESS-7
    #[test]
    fn a_file_with_certificates_is_not_discarded_by_an_empty_dir() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("bundle.pem");
        // The same root twice counts once.
        fs::write(&bundle, format!("{ROOT_PEM}{ROOT_PEM}")).unwrap();
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        let bundle_text = bundle.to_string_lossy().into_owned();
        let empty_text = empty.to_string_lossy().into_owned();
        let trust = Trust::from_env(&|name| match name {
            "SSL_CERT_FILE" => Some(bundle_text.clone()),
            "SSL_CERT_DIR" => Some(empty_text.clone()),
            _ => None,
        });
        assert_eq!(trust.certificates.len(), 1);
        let CertificateSource::Environment(origins) = &trust.source else {
            panic!(
                "expected the environment's certificates, got {:?}",
                trust.source
            );
        };
        assert_eq!(origins[0].count, 1);
        assert_eq!(origins[1].count, 0);
        let shown = trust.source.to_string();
        assert!(
            shown.contains(&format!("SSL_CERT_DIR {empty_text} (0 certificates)")),
            "{shown}"
        );
    }

    // Verifies: EGRESS-7
    #[test]
    fn a_directory_of_certificates_is_read_alone() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("root.pem"), ROOT_PEM).unwrap();
        fs::write(dir.path().join("README"), "not a certificate").unwrap();
        let dir_text = dir.path().to_string_lossy().into_owned();
        let trust = Trust::from_env(&|name| (name == "SSL_CERT_DIR").then(|| dir_text.clone()));
        assert_eq!(trust.certificates.len(), 1);
        assert_eq!(
            trust.source.to_string(),
            format!("SSL_CERT_DIR {dir_text} (1 certificate)")
        );
    }
}
