//! The integration tests, one binary: each module is one former test file, all of them
//! linking the crate, its 17 grammars, SQLite and tiktoken once.

#[allow(dead_code)]
mod common;

mod architecture;
mod artifact;
mod blast;
mod cli;
mod concurrency;
mod crash;
mod eval;
mod facade;
mod graph_c;
mod graph_cpp;
mod graph_csharp;
mod graph_go;
mod graph_incremental;
mod graph_java;
mod graph_javascript;
mod graph_kotlin;
mod graph_other;
mod graph_python;
mod graph_rust;
mod hook;
mod impact;
mod index_pipeline;
mod lang_bash;
mod lang_c;
mod lang_cpp;
mod lang_csharp;
mod lang_elixir;
mod lang_go;
mod lang_java;
mod lang_javascript;
mod lang_kotlin;
mod lang_lua;
mod lang_php;
mod lang_python;
mod lang_ruby;
mod lang_rust;
mod lang_scala;
mod lang_swift;
#[cfg(unix)]
mod mcp;
mod no_room;
mod pack;
mod redaction;
mod repopack;
mod skeleton;
