//! Small durable files that remember the highest milestone index a node reached, so that a
//! log that lost data (a deleted segment, a restored old copy) is refused at start instead of
//! being taken for the truth:
//! - `DATA_DIR/confirmed-index`: the highest milestone this node confirmed;
//! - `<coordinator key file>.issued`: the highest milestone the built-in coordinator issued
//!   with that key, so the key never signs two milestones for one index.
//!
//! Each holds the index as decimal text and is replaced atomically (temporary file, fsync,
//! rename, fsync of the directory).

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
};

use crate::EngineError;

/// One watermark file.
#[derive(Debug, Clone)]
pub struct Watermark {
    path: PathBuf,
}

impl Watermark {
    /// The watermark kept in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Its file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index written last; `None` when the file does not exist.
    ///
    /// # Errors
    /// The file cannot be read or does not hold a decimal index.
    pub fn read(&self) -> Result<Option<u32>, EngineError> {
        match fs::read_to_string(&self.path) {
            Ok(text) => text.trim().parse().map(Some).map_err(|_| {
                EngineError::Inconsistent(format!(
                    "{} does not hold a milestone index",
                    self.path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(EngineError::Io {
                context: format!("reading {}", self.path.display()),
                source,
            }),
        }
    }

    /// Replaces the index durably.
    ///
    /// # Errors
    /// Any I/O failure (the old value then stays).
    pub fn write(&self, index: u32) -> Result<(), EngineError> {
        let io = |source| EngineError::Io {
            context: format!("writing {}", self.path.display()),
            source,
        };
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut file = fs::File::create(&tmp).map_err(io)?;
        file.write_all(format!("{index}\n").as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io)?;
        fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watermark_round_trips_and_starts_absent() {
        let dir = tempfile::tempdir().expect("dir");
        let mark = Watermark::new(dir.path().join("confirmed-index"));
        assert_eq!(mark.read().ok(), Some(None));
        mark.write(34).expect("write");
        assert_eq!(mark.read().ok(), Some(Some(34)));
        mark.write(35).expect("write");
        assert_eq!(mark.read().ok(), Some(Some(35)));
        std::fs::write(mark.path(), "x").expect("garble");
        assert!(mark.read().is_err());
    }
}
