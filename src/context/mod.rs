//! What an agent reads, under a token budget: the definitions graph loaded from the database
//! (`defgraph`, with personalized PageRank), token counting and fitting (`tokens`), and the
//! renderers built on them: `skeleton`, `repomap`, `pack`, `impact` (a git diff's context), with `render` for the text pieces
//! they share, and `cursor` for answers that continue where an earlier one stopped. Renderers
//! only read the database.

pub mod cursor;
pub mod defgraph;
pub mod impact;
pub mod pack;
pub mod render;
pub mod repomap;
pub mod repopack;
pub mod skeleton;
pub mod tokens;
