//! Python extraction: definitions at every depth (decorated and async ones included, reported
//! at the `def`/`class` line), qualified names from the path, signatures, docstrings, comments,
//! constants, and reference sites of every kind.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const SRC: &str = r#""""Shop models."""
import os
import collections.abc as cabc
from .base import Model as BaseModel, registry
from ..util import *

MAX_ITEMS = 100
default_name = "x"


# Builds a price.
# Second line.
def price(amount, rate=0.2) -> float:
    return round(amount * (1 + rate), 2)


@registry.register
@dataclass(frozen=True)
class Cart(BaseModel, cabc.Sized, metaclass=Meta):
    """A shopping cart.

        Holds items.
    """

    LIMIT = 3

    def __init__(self, items):
        self.items = list(items)

    @property
    def total(self):
        def add(a, b):
            return a + b
        return sum(price(i) for i in self.items)

    async def checkout(self, client):
        await client.post(os.path.join("a", "b"))

    class Meta:
        ordering = ["id"]


if os.environ.get("X"):
    def conditional():
        pass
"#;

#[test]
fn python_definitions_names_parents_and_lines() {
    let x = run("src/shop/models.py", SRC);
    assert_eq!(
        outline(&x),
        vec![
            (
                NodeKind::Constant,
                "shop.models.MAX_ITEMS",
                "src/shop/models.py",
                7,
                7
            ),
            (
                NodeKind::Function,
                "shop.models.price",
                "src/shop/models.py",
                13,
                14
            ),
            (
                NodeKind::Class,
                "shop.models.Cart",
                "src/shop/models.py",
                19,
                40
            ),
            (
                NodeKind::Constant,
                "shop.models.Cart.LIMIT",
                "shop.models.Cart",
                25,
                25
            ),
            (
                NodeKind::Method,
                "shop.models.Cart.__init__",
                "shop.models.Cart",
                27,
                28
            ),
            (
                NodeKind::Method,
                "shop.models.Cart.total",
                "shop.models.Cart",
                31,
                34
            ),
            (
                NodeKind::Function,
                "shop.models.Cart.total.add",
                "shop.models.Cart.total",
                32,
                33
            ),
            (
                NodeKind::Method,
                "shop.models.Cart.checkout",
                "shop.models.Cart",
                36,
                37
            ),
            (
                NodeKind::Class,
                "shop.models.Cart.Meta",
                "shop.models.Cart",
                39,
                40
            ),
            (
                NodeKind::Function,
                "shop.models.conditional",
                "src/shop/models.py",
                44,
                45
            ),
        ]
    );
    // Lower-case module variables, class attributes and instance attributes are not nodes.
    assert!(x
        .nodes
        .iter()
        .all(|n| n.name != "default_name" && n.name != "ordering" && n.name != "items"));
    // The decorated class's range starts at its first decorator.
    let cart = unique_node(&x, "shop.models.Cart");
    assert_eq!(
        &SRC[cart.start_byte as usize..][..20],
        "@registry.register\n@"
    );
}

#[test]
fn python_signatures_docstrings_and_comments() {
    let x = run("src/shop/models.py", SRC);
    assert_eq!(
        sig(&x, "shop.models.Cart"),
        "@registry.register\n@dataclass(frozen=True)\nclass Cart(BaseModel, cabc.Sized, metaclass=Meta):"
    );
    assert_eq!(
        sig(&x, "shop.models.price"),
        "def price(amount, rate=0.2) -> float:"
    );
    assert_eq!(
        sig(&x, "shop.models.Cart.total"),
        "@property\ndef total(self):"
    );
    assert_eq!(
        sig(&x, "shop.models.Cart.checkout"),
        "async def checkout(self, client):"
    );
    assert_eq!(sig(&x, "shop.models.MAX_ITEMS"), "MAX_ITEMS = 100");
    assert_eq!(
        doc(&x, "shop.models.Cart"),
        Some("A shopping cart.\n\nHolds items.")
    );
    assert_eq!(
        doc(&x, "shop.models.price"),
        Some("Builds a price.\nSecond line.")
    );
    assert_eq!(doc(&x, "shop.models.Cart.__init__"), None);
}

#[test]
fn python_references_of_every_kind() {
    let x = run("pkg/models.py", SRC);
    let imports: Vec<_> = refs(&x)
        .into_iter()
        .filter(|r| r.1 == RefKind::Import)
        .collect();
    assert_eq!(
        imports,
        vec![
            ("pkg/models.py", RefKind::Import, "", Some("os"), None, 2),
            (
                "pkg/models.py",
                RefKind::Import,
                "",
                Some("collections.abc"),
                Some("cabc"),
                3
            ),
            (
                "pkg/models.py",
                RefKind::Import,
                "Model",
                Some(".base"),
                Some("BaseModel"),
                4
            ),
            (
                "pkg/models.py",
                RefKind::Import,
                "registry",
                Some(".base"),
                None,
                4
            ),
            (
                "pkg/models.py",
                RefKind::Import,
                "*",
                Some("..util"),
                None,
                5
            ),
        ]
    );
    let of = |kind| -> Vec<(String, String, u32)> { kind_refs_owned(&x, kind) };
    assert_eq!(
        of(RefKind::Decorator),
        owned(&[
            ("pkg.models.Cart", "registry.register", 17),
            ("pkg.models.Cart", "dataclass", 18),
            ("pkg.models.Cart.total", "property", 30),
        ])
    );
    assert_eq!(
        of(RefKind::Inherits),
        owned(&[
            ("pkg.models.Cart", "BaseModel", 19),
            ("pkg.models.Cart", "cabc.Sized", 19),
        ])
    );
    assert_eq!(
        of(RefKind::Call),
        owned(&[
            ("pkg.models.price", "round", 14),
            ("pkg.models.Cart", "dataclass", 18),
            ("pkg.models.Cart.__init__", "list", 28),
            ("pkg.models.Cart.total", "sum", 34),
            ("pkg.models.Cart.total", "price", 34),
            ("pkg.models.Cart.checkout", "client.post", 37),
            ("pkg.models.Cart.checkout", "os.path.join", 37),
            ("pkg/models.py", "os.environ.get", 43),
        ])
    );
}

#[test]
fn python_module_names_follow_the_package_path() {
    let names = |path: &str| run(path, "def f(): pass\n").nodes[1].qualified_name.clone();
    assert_eq!(
        names("django/db/models/query.py"),
        "django.db.models.query.f"
    );
    assert_eq!(names("django/db/__init__.py"), "django.db.f");
    assert_eq!(names("src/flask/app.py"), "flask.app.f");
    assert_eq!(names("setup.py"), "setup.f");
    assert_eq!(names("stubs/types.pyi"), "stubs.types.f");
}

#[test]
fn python_syntax_errors_keep_the_definitions_around_them() {
    let x = run(
        "broken.py",
        "def before():\n    pass\n\ndef broken(:\n    return\n\nclass After:\n    def m(self):\n        pass\n",
    );
    assert!(x.has_errors);
    let names: Vec<&str> = x.nodes[1..].iter().map(|n| n.name.as_str()).collect();
    assert!(names.contains(&"before"), "{names:?}");
    assert!(names.contains(&"After"), "{names:?}");
    assert!(names.contains(&"m"), "{names:?}");
    assert_eq!(unique_node(&x, "broken.before").start_line, 1);

    // A stray `\n` written out as two characters: the parser wraps the rest in an ERROR node.
    let x = run(
        "stray.py",
        "def first():\n    return 0\n\ndef added():\\n    return helper(1)\n",
    );
    assert!(x.has_errors);
    assert_eq!(unique_node(&x, "stray.first").start_line, 1);
}
