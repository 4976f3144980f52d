//! The built-in coordinator's key file.

use super::*;

/// Loads the coordinator seed from `dir/coordinator.key`, creating it on first start.
pub(super) fn load_or_create_key(dir: &Path) -> Result<SigningKey, EngineError> {
    let path = dir.join("coordinator.key");
    let io = |context: String| move |source| EngineError::Io { context, source };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_key(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = [0u8; 32];
            rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut seed);
            let tmp = dir.join("coordinator.key.tmp");
            std::fs::write(&tmp, hex::encode(seed))
                .map_err(io(format!("writing {}", tmp.display())))?;
            std::fs::File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(io("syncing the key".into()))?;
            std::fs::rename(&tmp, &path).map_err(io(format!("writing {}", path.display())))?;
            Ok(SigningKey::from_seed(&seed))
        }
        Err(e) => Err(EngineError::Io {
            context: format!("reading {}", path.display()),
            source: e,
        }),
    }
}

/// Reads a coordinator seed from a file given in the configuration (never created).
pub(super) fn read_key(path: &Path) -> Result<SigningKey, EngineError> {
    let text = std::fs::read_to_string(path).map_err(|source| EngineError::Io {
        context: format!("reading coordinator key {}", path.display()),
        source,
    })?;
    parse_key(path, &text)
}

/// A 32-byte seed as hex (with or without 0x, surrounding whitespace ignored).
pub(super) fn parse_key(path: &Path, text: &str) -> Result<SigningKey, EngineError> {
    let seed: [u8; 32] =
        ledger_codec::types::parse_config_hex(text).ok_or_else(|| EngineError::CoordinatorKey {
            path: path.to_path_buf(),
        })?;
    Ok(SigningKey::from_seed(&seed))
}
