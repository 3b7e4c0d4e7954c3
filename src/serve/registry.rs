//! The repositories `indexer serve` serves by default: a small JSON file under the cache
//! folder (`repos.json`), written whole into a temporary file and renamed into place, so a
//! reader never sees half of it.

use crate::error::{Error, Result};
use crate::store::project;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a registered repository is served from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RepoKind {
    /// A working tree on this machine, indexed and kept fresh.
    Tree,
    /// A committed `graph.db.zst`, served read-only without its tree.
    Artifact,
    /// A git URL, cloned shallowly into the cache folder and refreshed in the background.
    Remote,
}

impl RepoKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RepoKind::Tree => "tree",
            RepoKind::Artifact => "artifact",
            RepoKind::Remote => "remote",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepoEntry {
    pub name: String,
    pub kind: RepoKind,
    /// The tree's root, the artifact file, or the remote's clone in the cache folder.
    pub path: PathBuf,
    /// The remote's URL (remotes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl RepoEntry {
    /// Where it is served from, as a person would name it: the URL of a remote, else the path.
    pub fn location(&self) -> String {
        self.url
            .clone()
            .unwrap_or_else(|| self.path.display().to_string())
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RegistryFile {
    version: u32,
    repos: Vec<RepoEntry>,
}

const VERSION: u32 = 1;

/// The registered repositories, in the order they were added.
#[derive(Debug)]
pub struct Registry {
    file: PathBuf,
    pub repos: Vec<RepoEntry>,
}

impl Registry {
    /// The registry in the cache folder (empty when none was written yet).
    pub fn load() -> Result<Registry> {
        Self::load_from(project::cache_dir()?.join("repos.json"))
    }

    pub fn load_from(file: PathBuf) -> Result<Registry> {
        let repos = match std::fs::read(&file) {
            Ok(bytes) => {
                let parsed: RegistryFile = serde_json::from_slice(&bytes).map_err(|e| {
                    Error::invalid(format!(
                        "{} is not a repository registry ({e}): fix or delete it",
                        file.display()
                    ))
                })?;
                if parsed.version != VERSION {
                    return Err(Error::invalid(format!(
                        "{} is a registry of version {} (this indexer reads version {VERSION})",
                        file.display(),
                        parsed.version
                    )));
                }
                parsed.repos
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(Error::io(&file, format!("cannot read {}", file.display()))(
                    e,
                ));
            }
        };
        Ok(Registry { file, repos })
    }

    pub fn get(&self, name: &str) -> Option<&RepoEntry> {
        self.repos.iter().find(|r| r.name == name)
    }

    /// Refuses a name that is not usable or already registered (saying by what).
    pub fn check_free(&self, name: &str) -> Result<()> {
        check_name(name)?;
        match self.get(name) {
            Some(same) => Err(Error::invalid(format!(
                "a repository named {name:?} is already registered ({}): pass --name, or `indexer repo remove {name}` first",
                same.location()
            ))),
            None => Ok(()),
        }
    }

    /// Adds `entry`; a name or a path already registered is refused with the entry that
    /// has it.
    pub fn add(&mut self, entry: RepoEntry) -> Result<()> {
        self.check_free(&entry.name)?;
        if let Some(same) = self
            .repos
            .iter()
            .find(|r| r.path == entry.path && r.url == entry.url)
        {
            return Err(Error::invalid(format!(
                "{} is already registered as {:?}",
                entry.location(),
                same.name
            )));
        }
        self.repos.push(entry);
        self.save()
    }

    pub fn remove(&mut self, name: &str) -> Result<RepoEntry> {
        let Some(at) = self.repos.iter().position(|r| r.name == name) else {
            return Err(Error::NotFound {
                name: name.to_string(),
            });
        };
        let entry = self.repos.remove(at);
        self.save()?;
        Ok(entry)
    }

    fn save(&self) -> Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(Error::io(dir, format!("cannot create {}", dir.display())))?;
        let body = serde_json::to_vec_pretty(&RegistryFile {
            version: VERSION,
            repos: self.repos.clone(),
        })
        .map_err(|e| Error::invalid(e.to_string()))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(Error::io(
            dir,
            format!("cannot write into {}", dir.display()),
        ))?;
        std::io::Write::write_all(&mut tmp, &body)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(Error::io(
                &self.file,
                "cannot write the registry".to_string(),
            ))?;
        tmp.persist(&self.file).map_err(|e| {
            Error::io(&self.file, format!("cannot write {}", self.file.display()))(e.error)
        })?;
        Ok(())
    }
}

/// Names appear in tool arguments and answers: short, printable, no path separators.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{name:?} is not a usable repository name: letters, digits, '-', '_' and '.' (not first), at most 100"
        )))
    }
}

/// A name for a repository from the last segment of its path or URL.
pub fn default_name(path_or_url: &str) -> String {
    let last = path_or_url
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\', ':'])
        .next()
        .unwrap_or("");
    let last = [".git", ".db.zst", ".zst"]
        .iter()
        .find_map(|suffix| last.strip_suffix(suffix))
        .unwrap_or(last);
    project::file_safe_name(last, "repo")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_last_segment() {
        assert_eq!(
            default_name("https://github.com/pallets/flask.git"),
            "flask"
        );
        assert_eq!(default_name("git@github.com:pallets/flask"), "flask");
        assert_eq!(default_name("/home/me/src/my repo/"), "my_repo");
        assert_eq!(default_name("/"), "repo");
        assert_eq!(default_name("/builds/shop.db.zst"), "shop");
    }

    #[test]
    fn add_remove_round_trip_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("repos.json");
        let mut reg = Registry::load_from(file.clone()).unwrap();
        assert!(reg.repos.is_empty());
        let entry = RepoEntry {
            name: "a".into(),
            kind: RepoKind::Tree,
            path: "/x/a".into(),
            url: None,
        };
        reg.add(entry.clone()).unwrap();
        let again = Registry::load_from(file.clone()).unwrap();
        assert_eq!(again.repos, vec![entry.clone()]);
        let err = reg.add(entry.clone()).unwrap_err().to_string();
        assert!(err.contains("already registered"), "{err}");
        let renamed = RepoEntry {
            name: "b".into(),
            ..entry.clone()
        };
        let err = reg.add(renamed).unwrap_err().to_string();
        assert!(err.contains("already registered as \"a\""), "{err}");
        assert!(reg
            .add(RepoEntry {
                name: "../x".into(),
                ..entry
            })
            .is_err());
        reg.remove("a").unwrap();
        assert!(Registry::load_from(file.clone()).unwrap().repos.is_empty());
        assert!(matches!(reg.remove("a"), Err(Error::NotFound { .. })));
        std::fs::write(&file, "{not json").unwrap();
        let err = Registry::load_from(file).unwrap_err().to_string();
        assert!(err.contains("is not a repository registry"), "{err}");
    }
}
