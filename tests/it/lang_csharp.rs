//! C# extraction: definitions, namespaces, signatures, XML docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const CART: &str = r#"using System;
using System.Collections.Generic;
using static System.Math;
using Json = System.Text.Json.JsonSerializer;

namespace Example.Shop;

/// <summary>A shopping cart.</summary>
/// <remarks>Not thread safe.</remarks>
[Serializable, Obsolete("use Basket")]
[DebuggerDisplay("{Count}")]
public partial class Cart<T> : CartBase<T>, IDisposable, System.IComparable<Cart<T>> where T : class
{
    public const int MaxItems = 100, MinItems = 1;
    private readonly List<T> items = new List<T>();
    public int Count { get; set; }
    public event EventHandler Changed;

    // Builds an empty cart.
    public Cart(int size) : base(size)
    {
        Count = size;
    }

    public Cart() : this(MaxItems) { }

    ~Cart() { Dispose(); }

    [Obsolete]
    public void Dispose()
    {
        var total = Helper.Sum<int>(items.Count);
        this.Notify<T>(total);
        int Twice(int x) => x * 2;
        Console.WriteLine(Twice(total));
    }

    public static Cart<T> operator +(Cart<T> a, Cart<T> b) => Merge(a, b);

    public delegate void Handler(object sender);

    public struct Line : IEquatable<Line>
    {
        public const string Unit = "pcs";
    }

    public record Entry(string Sku) : EntryBase(Sku), IComparable;

    public interface IListener : IObserver
    {
        void OnChange(Cart<T> cart);
    }

    public enum State : byte { Open, Closed }
}
"#;

#[test]
fn csharp_definitions_kinds_names_and_lines() {
    let fx = run("Shop/Cart.cs", CART);
    assert!(!fx.has_errors);
    let c = "Example.Shop.Cart";
    let expected = vec![
        (
            NodeKind::Class,
            c.to_string(),
            "Shop/Cart.cs".to_string(),
            12,
            55,
        ),
        (
            NodeKind::Constant,
            format!("{c}.MaxItems"),
            c.to_string(),
            14,
            14,
        ),
        (
            NodeKind::Constant,
            format!("{c}.MinItems"),
            c.to_string(),
            14,
            14,
        ),
        (NodeKind::Method, format!("{c}.Cart"), c.to_string(), 20, 23),
        (NodeKind::Method, format!("{c}.Cart"), c.to_string(), 25, 25),
        (
            NodeKind::Method,
            format!("{c}.~Cart"),
            c.to_string(),
            27,
            27,
        ),
        (
            NodeKind::Method,
            format!("{c}.Dispose"),
            c.to_string(),
            30,
            36,
        ),
        (
            NodeKind::Function,
            format!("{c}.Dispose.Twice"),
            format!("{c}.Dispose"),
            34,
            34,
        ),
        (
            NodeKind::Type,
            format!("{c}.Handler"),
            c.to_string(),
            40,
            40,
        ),
        (NodeKind::Class, format!("{c}.Line"), c.to_string(), 42, 45),
        (
            NodeKind::Constant,
            format!("{c}.Line.Unit"),
            format!("{c}.Line"),
            44,
            44,
        ),
        (NodeKind::Class, format!("{c}.Entry"), c.to_string(), 47, 47),
        (
            NodeKind::Interface,
            format!("{c}.IListener"),
            c.to_string(),
            49,
            52,
        ),
        (
            NodeKind::Method,
            format!("{c}.IListener.OnChange"),
            format!("{c}.IListener"),
            51,
            51,
        ),
        (NodeKind::Enum, format!("{c}.State"), c.to_string(), 54, 54),
    ];
    assert_eq!(outline_owned(&fx), expected);
    assert_eq!(fx.nodes[8].parent, Some(7));
}

#[test]
fn csharp_not_definitions() {
    let fx = run("Shop/Cart.cs", CART);
    // Properties, events, fields, operators, locals and enum members are not definitions.
    for name in ["Count", "Changed", "items", "total", "Open", "x", "size"] {
        assert!(
            fx.nodes
                .iter()
                .all(|n| n.name != name && !n.name.contains("operator")),
            "{name} must not be a definition"
        );
    }
}

#[test]
fn csharp_signatures_and_docs() {
    let fx = run("Shop/Cart.cs", CART);
    let cart = node(&fx, "Example.Shop.Cart");
    assert_eq!(
        cart.signature.as_deref(),
        Some("[Serializable, Obsolete(\"use Basket\")]\n[DebuggerDisplay(\"{Count}\")]\npublic partial class Cart<T> : CartBase<T>, IDisposable, System.IComparable<Cart<T>> where T : class")
    );
    assert_eq!(
        cart.docstring.as_deref(),
        Some("<summary>A shopping cart.</summary>\n<remarks>Not thread safe.</remarks>")
    );
    assert_eq!(
        cart.start_byte as usize,
        CART.find("[Serializable").unwrap()
    );
    assert_eq!(
        node(&fx, "Example.Shop.Cart.MaxItems").signature.as_deref(),
        Some("public const int MaxItems = 100, MinItems = 1;")
    );
    assert_eq!(
        fx.nodes[4].signature.as_deref(),
        Some("public Cart(int size) : base(size)")
    );
    assert_eq!(
        fx.nodes[4].docstring.as_deref(),
        Some("Builds an empty cart.")
    );
    assert_eq!(
        node(&fx, "Example.Shop.Cart.Dispose").signature.as_deref(),
        Some("[Obsolete]\npublic void Dispose()")
    );
    assert_eq!(
        node(&fx, "Example.Shop.Cart.Dispose.Twice")
            .signature
            .as_deref(),
        Some("int Twice(int x)")
    );
    assert_eq!(
        node(&fx, "Example.Shop.Cart.Handler").signature.as_deref(),
        Some("public delegate void Handler(object sender);")
    );
    assert_eq!(
        node(&fx, "Example.Shop.Cart.IListener.OnChange")
            .signature
            .as_deref(),
        Some("void OnChange(Cart<T> cart);")
    );
    assert_eq!(
        node(&fx, "Example.Shop.Cart.State").signature.as_deref(),
        Some("public enum State : byte")
    );
}

#[test]
fn csharp_references() {
    let fx = run("Shop/Cart.cs", CART);
    let c = "Example.Shop.Cart";
    let imports: Vec<(String, Option<String>, Option<String>)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.name.clone(), r.module.clone(), r.alias.clone()))
        .collect();
    assert_eq!(
        imports,
        vec![
            (String::new(), Some("System".to_string()), None),
            (
                String::new(),
                Some("System.Collections.Generic".to_string()),
                None
            ),
            ("*".to_string(), Some("System.Math".to_string()), None),
            (
                "JsonSerializer".to_string(),
                Some("System.Text.Json".to_string()),
                Some("Json".to_string())
            ),
        ]
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Decorator),
        owned(&[
            (c, "Serializable", 10),
            (c, "Obsolete", 10),
            (c, "DebuggerDisplay", 11),
            (&format!("{c}.Dispose"), "Obsolete", 29),
        ])
    );
    // Bases named like interfaces are implemented; struct bases are always interfaces;
    // an interface inherits its bases; an enum's underlying type is no base.
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Inherits),
        owned(&[
            (c, "CartBase", 12),
            (&format!("{c}.Entry"), "EntryBase", 47),
            (&format!("{c}.IListener"), "IObserver", 49),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Implements),
        owned(&[
            (c, "IDisposable", 12),
            (c, "System.IComparable", 12),
            (&format!("{c}.Line"), "IEquatable", 42),
            (&format!("{c}.Entry"), "IComparable", 47),
        ])
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[
            (c, "List", 15),
            (&format!("{c}.Cart"), "base", 20),
            (&format!("{c}.Cart"), "this", 25),
            (&format!("{c}.~Cart"), "Dispose", 27),
            (&format!("{c}.Dispose"), "Helper.Sum", 32),
            (&format!("{c}.Dispose"), "this.Notify", 33),
            (&format!("{c}.Dispose"), "Console.WriteLine", 35),
            (&format!("{c}.Dispose"), "Twice", 35),
            // Operators are not definitions: their calls belong to the class.
            (c, "Merge", 38),
        ])
    );
}

#[test]
fn csharp_block_namespaces_are_modules() {
    let src = "namespace Example.Outer\n{\n    using Example.Shop;\n\n    namespace Inner\n    {\n        class Widget\n        {\n            void Run() { }\n        }\n    }\n\n    class Top { }\n}\n";
    let fx = run("src/Blocks.cs", src);
    let expected = vec![
        (
            NodeKind::Module,
            "Example.Outer".to_string(),
            "src/Blocks.cs".to_string(),
            1,
            14,
        ),
        (
            NodeKind::Module,
            "Example.Outer.Inner".to_string(),
            "Example.Outer".to_string(),
            5,
            11,
        ),
        (
            NodeKind::Class,
            "Example.Outer.Inner.Widget".to_string(),
            "Example.Outer.Inner".to_string(),
            7,
            10,
        ),
        (
            NodeKind::Method,
            "Example.Outer.Inner.Widget.Run".to_string(),
            "Example.Outer.Inner.Widget".to_string(),
            9,
            9,
        ),
        (
            NodeKind::Class,
            "Example.Outer.Top".to_string(),
            "Example.Outer".to_string(),
            13,
            13,
        ),
    ];
    assert_eq!(outline_owned(&fx), expected);
    assert_eq!(
        node(&fx, "Example.Outer").signature.as_deref(),
        Some("namespace Example.Outer")
    );
    let using = fx.refs.iter().find(|r| r.kind == RefKind::Import).unwrap();
    assert_eq!(using.module.as_deref(), Some("Example.Shop"));
    assert_eq!(fx.nodes[using.node].qualified_name, "Example.Outer");
}

#[test]
fn csharp_module_name_falls_back_to_directory() {
    let fx = run(
        "src/Tools/Program.cs",
        "class Program { static void Main() { } }\n",
    );
    assert_eq!(fx.nodes[1].qualified_name, "src.Tools.Program");
    assert_eq!(fx.nodes[2].qualified_name, "src.Tools.Program.Main");
}

#[test]
fn csharp_syntax_error_keeps_surrounding_definitions() {
    let src = "namespace N;\nclass Good { void Before() { Run(); } }\nclass Broken {\n    void Ok() {}\n    void Bad( { int x = ; }\n    int After() { return 1; }\n}\ninterface ILater { void M(); }\n";
    let fx = run("Broken.cs", src);
    assert!(fx.has_errors);
    let names: Vec<(NodeKind, &str, u32)> = fx
        .nodes
        .iter()
        .skip(1)
        .map(|n| (n.kind, n.qualified_name.as_str(), n.start_line))
        .collect();
    assert_eq!(
        names,
        vec![
            (NodeKind::Class, "N.Good", 2),
            (NodeKind::Method, "N.Good.Before", 2),
            // The parser leaves `class Broken {` in an error node: recovered from it.
            (NodeKind::Class, "N.Broken", 3),
            (NodeKind::Method, "N.Broken.Ok", 4),
            // Recovery closes the class early and reads `After` as a local function.
            (NodeKind::Function, "N.After", 6),
            (NodeKind::Interface, "N.ILater", 8),
            (NodeKind::Method, "N.ILater.M", 8),
        ]
    );
    assert_eq!(
        node(&fx, "N.Broken").signature.as_deref(),
        Some("class Broken")
    );
    assert_eq!(
        kind_refs_owned(&fx, RefKind::Call),
        owned(&[("N.Good.Before", "Run", 2)])
    );
}
