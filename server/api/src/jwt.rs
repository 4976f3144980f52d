//! API tokens for protected routes: HS256 JWTs signed with a secret kept in the data dir.
//!
//! The secret (32 random bytes, hex, file [`SECRET_FILE`], mode 0600) is made on first start
//! (or by `ledger-node tools jwt`) and kept. Tokens carry `sub` = [`SUBJECT`] and `iat`, and
//! never expire (as in Hornet); a token that does carry `exp` is checked against it.

use std::{
    fs, io,
    io::Write,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// File name of the secret inside the data dir.
pub const SECRET_FILE: &str = "jwt-secret";

/// The `sub` claim of API tokens.
pub const SUBJECT: &str = "ledger-node-api";

/// Seconds of clock skew allowed on `exp` and `nbf`.
pub const CLOCK_SKEW_SECS: u64 = 5;

/// Length of a generated secret in bytes.
const SECRET_LEN: usize = 32;

/// Errors loading or creating the secret, or signing a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// The secret file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The secret file does not hold a hex secret of at least 32 bytes.
    #[error("{}: not a hex secret of at least {SECRET_LEN} bytes", path.display())]
    BadSecret {
        /// The file.
        path: PathBuf,
    },
    /// Signing failed.
    #[error("cannot sign token: {0}")]
    Sign(#[from] jsonwebtoken::errors::Error),
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    iat: u64,
}

/// Issues and verifies API tokens with one secret.
#[derive(Clone)]
pub struct JwtAuth {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl std::fmt::Debug for JwtAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuth").finish_non_exhaustive()
    }
}

impl JwtAuth {
    /// Keys for this secret.
    pub fn from_secret(secret: &[u8]) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        // API tokens never expire; `exp` is still checked when present.
        validation.required_spec_claims.clear();
        validation.required_spec_claims.insert("sub".to_owned());
        validation.sub = Some(SUBJECT.to_owned());
        validation.validate_aud = false;
        // `exp` and `nbf`, when present, hold to within a few seconds of clock skew (the
        // library's default would accept an expired token for another minute).
        validation.validate_nbf = true;
        validation.leeway = CLOCK_SKEW_SECS;
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
        }
    }

    /// Loads the secret from `data_dir`, creating the directory and a fresh secret if there
    /// is none yet.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, JwtError> {
        let path = data_dir.join(SECRET_FILE);
        let io_err = |source| JwtError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(data_dir).map_err(|source| JwtError::Io {
            path: data_dir.to_owned(),
            source,
        })?;
        match create_new(&path) {
            Ok(file) => {
                let mut secret = [0u8; SECRET_LEN];
                rand::rngs::OsRng.fill_bytes(&mut secret);
                let mut file = file;
                file.write_all(hex::encode(secret).as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(io_err)?;
                tracing::info!(path = %path.display(), "created a new API token secret");
                Ok(Self::from_secret(&secret))
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let text = fs::read_to_string(&path).map_err(io_err)?;
                let secret = hex::decode(text.trim())
                    .ok()
                    .filter(|s| s.len() >= SECRET_LEN)
                    .ok_or_else(|| JwtError::BadSecret { path: path.clone() })?;
                Ok(Self::from_secret(&secret))
            }
            Err(e) => Err(io_err(e)),
        }
    }

    /// A new API token.
    pub fn issue(&self) -> Result<String, JwtError> {
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let claims = Claims {
            sub: SUBJECT.to_owned(),
            iat,
        };
        Ok(jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &self.encoding,
        )?)
    }

    /// Whether `token` is a valid API token for this secret.
    pub fn verify(&self, token: &str) -> bool {
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).is_ok()
    }
}

/// Creates `path` exclusively, readable only by the owner where the platform allows.
fn create_new(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_token_verifies_with_same_secret_only() {
        let a = JwtAuth::from_secret(&[1; 32]);
        let b = JwtAuth::from_secret(&[2; 32]);
        let token = a.issue().expect("sign");
        assert!(a.verify(&token));
        assert!(!b.verify(&token));
        assert!(!a.verify("not-a-token"));
        assert!(!a.verify(""));
    }

    #[test]
    fn token_with_other_subject_or_expired_is_rejected() {
        let secret = [3u8; 32];
        let auth = JwtAuth::from_secret(&secret);
        let key = EncodingKey::from_secret(&secret);
        let other_sub = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &serde_json::json!({"sub": "someone", "iat": 0}),
            &key,
        )
        .expect("sign");
        assert!(!auth.verify(&other_sub));
        let expired = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &serde_json::json!({"sub": SUBJECT, "iat": 0, "exp": 1}),
            &key,
        )
        .expect("sign");
        assert!(!auth.verify(&expired));
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let token = |claims: serde_json::Value| {
            jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &key).expect("sign")
        };
        // Expired 20 s ago: refused (the library default leeway was 60 s).
        assert!(!auth.verify(&token(
            serde_json::json!({"sub": SUBJECT, "iat": 0, "exp": now - 20})
        )));
        // Not valid before a minute from now: refused.
        assert!(!auth.verify(&token(
            serde_json::json!({"sub": SUBJECT, "iat": 0, "nbf": now + 60})
        )));
        // Valid window, and skew within the allowance: accepted.
        assert!(auth.verify(&token(
            serde_json::json!({"sub": SUBJECT, "iat": 0, "nbf": now + 2, "exp": now + 60})
        )));
    }

    #[test]
    fn secret_is_created_once_and_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("nested").join("data");
        let first = JwtAuth::load_or_create(&data).expect("create");
        let token = first.issue().expect("sign");
        let second = JwtAuth::load_or_create(&data).expect("load");
        assert!(second.verify(&token));
        let text = fs::read_to_string(data.join(SECRET_FILE)).expect("read");
        assert_eq!(text.len(), SECRET_LEN * 2);
    }

    #[test]
    fn corrupt_secret_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join(SECRET_FILE), "zz").expect("write");
        assert!(matches!(
            JwtAuth::load_or_create(dir.path()),
            Err(JwtError::BadSecret { .. })
        ));
    }
}
