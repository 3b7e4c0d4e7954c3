//! The library's error type: what went wrong, in terms a caller can match on. Internally the
//! stages use `anyhow` and raise these where the condition is found; the facade turns any
//! other failure into `Error::Other` with its whole chain of causes as the message.

use std::path::PathBuf;

/// Why an operation on an index failed. Each variant's message is the one the `indexer`
/// command prints.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No index where one was looked for; the message says where and what to run.
    NoIndex { message: String },
    /// Another run is updating this database right now.
    Locked { db: PathBuf },
    /// Written by an older version: it must be rebuilt before it can be queried.
    SchemaTooOld {
        db: PathBuf,
        found: i32,
        supported: i32,
    },
    /// Written by a newer version than this one understands.
    SchemaTooNew {
        db: PathBuf,
        found: i32,
        supported: i32,
    },
    /// A SQLite database that is not one of ours (its `application_id` says so).
    Foreign { path: PathBuf, application_id: i32 },
    /// Not a readable database, or a damaged one.
    Corrupt { path: PathBuf, message: String },
    /// Nothing in the index has this name (or path).
    NotFound { name: String },
    /// More than one definition matches a short name; `candidates` holds the first ten.
    Ambiguous {
        name: String,
        candidates: Vec<String>,
        more: bool,
    },
    /// An option or argument out of range, or a value the operation cannot use.
    InvalidArgument { message: String },
    /// Reading or writing a file failed.
    Io {
        path: PathBuf,
        message: String,
        source: std::io::Error,
    },
    /// Anything else, with its causes.
    Other { message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoIndex { message }
            | Error::Corrupt { message, .. }
            | Error::InvalidArgument { message }
            | Error::Other { message } => f.write_str(message),
            Error::Locked { db } => write!(
                f,
                "another `indexer index` is updating {} right now: wait for it to finish",
                db.display()
            ),
            Error::SchemaTooOld {
                db,
                found,
                supported,
            } => write!(
                f,
                "{} was written by an older indexer (schema {found}, now {supported}): \
                 run `indexer index PATH` to rebuild it",
                db.display()
            ),
            Error::SchemaTooNew {
                db,
                found,
                supported,
            } => write!(
                f,
                "{} has schema version {found}, newer than this indexer understands \
                 ({supported}): upgrade indexer",
                db.display()
            ),
            Error::Foreign {
                path,
                application_id,
            } => write!(
                f,
                "{} is not a codebase-indexer database (application_id {application_id:#x}); \
                 refusing to touch it: pass a different --db",
                path.display()
            ),
            Error::NotFound { name } => write!(
                f,
                "nothing named {name:?} in the index: try `indexer search {name}`"
            ),
            Error::Ambiguous {
                name,
                candidates,
                more,
            } => write!(
                f,
                "{name:?} is ambiguous{}; pass one of:\n  {}",
                if *more { " (first 10 shown)" } else { "" },
                candidates.join("\n  ")
            ),
            // The cause is the error's `source`, printed after it by whoever prints chains.
            Error::Io { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Error {
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            message: message.into(),
        }
    }

    /// `Error::Io` about `path`, for `map_err`.
    pub(crate) fn io(
        path: &std::path::Path,
        message: impl Into<String>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let (path, message) = (path.to_path_buf(), message.into());
        move |source| Error::Io {
            path,
            message,
            source,
        }
    }
}

/// Raises `Error::InvalidArgument` inside a stage (as an `anyhow::Error`).
macro_rules! invalid {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::invalid(format!($($arg)*)).into())
    };
}
pub(crate) use invalid;

impl From<anyhow::Error> for Error {
    /// The typed error a stage raised, when nothing was added on its way up; otherwise the
    /// whole chain as one message (what `{:#}` prints).
    fn from(e: anyhow::Error) -> Error {
        // Outermost message equal to the typed error's: no context was added on top of it.
        let bare = e
            .downcast_ref::<Error>()
            .is_some_and(|typed| typed.to_string() == e.to_string());
        if !bare {
            return Error::Other {
                message: format!("{e:#}"),
            };
        }
        e.downcast::<Error>().unwrap_or_else(|e| Error::Other {
            message: format!("{e:#}"),
        })
    }
}
