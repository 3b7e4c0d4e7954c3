//! Php: not yet extracted beyond the file node.

use super::{dotted_module, Cx, Def, Rules};
use crate::model::{NodeKind, RawRef};
use tree_sitter::Node;

pub struct Php;

impl Rules for Php {
    fn definition<'t>(&self, _node: Node<'t>, _enclosing: NodeKind, _cx: &Cx) -> Option<Def<'t>> {
        None
    }

    fn references(&self, _node: Node, _cx: &Cx, _out: &mut Vec<RawRef>) {}

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &[], &[])
    }
}
