//! `<data-dir>/p2pstore/peering.json`: the known peers, in Hornet's shape
//! (`{"peers":[{"multiAddress":"/ip4/…/tcp/…/p2p/12D3KooW…","alias":"…"}]}`), written
//! atomically whenever the set changes.

use std::{
    fs, io,
    io::Write,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

/// File name inside the p2p store.
pub const PEERING_FILE: &str = "peering.json";

/// One known peer as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeeringEntry {
    /// Full multiaddr ending in `/p2p/<peerId>`.
    pub multi_address: String,
    /// Alias, empty when none.
    #[serde(default)]
    pub alias: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct PeeringFile {
    #[serde(default)]
    peers: Vec<PeeringEntry>,
}

/// Errors reading or writing the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PeeringFileError {
    /// I/O.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Not the expected JSON.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
}

/// Reads the known peers (none when the file does not exist).
///
/// # Errors
/// An unreadable or malformed file.
pub fn load(store: &Path) -> Result<Vec<PeeringEntry>, PeeringFileError> {
    let path = store.join(PEERING_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(PeeringFileError::Io { path, source }),
    };
    serde_json::from_str::<PeeringFile>(&text)
        .map(|f| f.peers)
        .map_err(|source| PeeringFileError::Json { path, source })
}

/// Writes the known peers: temp file, fsync, rename.
///
/// # Errors
/// The file could not be written.
pub fn save(store: &Path, peers: Vec<PeeringEntry>) -> Result<(), PeeringFileError> {
    let path = store.join(PEERING_FILE);
    let tmp = store.join(format!("{PEERING_FILE}.tmp"));
    let io_err = |source| PeeringFileError::Io {
        path: path.clone(),
        source,
    };
    let mut text = serde_json::to_vec_pretty(&PeeringFile { peers }).map_err(|source| {
        PeeringFileError::Json {
            path: path.clone(),
            source,
        }
    })?;
    text.push(b'\n');
    let mut f = fs::File::create(&tmp).map_err(io_err)?;
    f.write_all(&text).map_err(io_err)?;
    f.sync_all().map_err(io_err)?;
    fs::rename(&tmp, &path).map_err(io_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_hornet_shape() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(load(dir.path()).expect("missing is empty").is_empty());
        let entry = PeeringEntry {
            multi_address:
                "/ip4/127.0.0.1/tcp/15600/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"
                    .into(),
            alias: "b".into(),
        };
        save(dir.path(), vec![entry.clone()]).expect("save");
        let text = fs::read_to_string(dir.path().join(PEERING_FILE)).expect("read");
        assert!(text.contains("\"peers\""), "{text}");
        assert!(text.contains("\"multiAddress\""), "{text}");
        assert_eq!(load(dir.path()).expect("load"), vec![entry]);
        fs::write(dir.path().join(PEERING_FILE), "{").expect("write");
        assert!(load(dir.path()).is_err());
    }
}
