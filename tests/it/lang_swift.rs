//! Swift extraction: definitions, qualified names, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const PATH: &str = "Sources/Geometry/Shapes.swift";

const SHAPES: &str = r#"import Foundation
import struct Collections.Deque

/// A drawable shape.
/// Second line.
@objc @MainActor
public class Shape: NSObject, Drawable, Codable {
    static let unit = 1.0
    let sides: Int
    init(sides: Int) {
        self.sides = sides
        super.init()
    }
    deinit { log("bye") }
    /** Area in square units. */
    @discardableResult
    func area() -> Double {
        let scale = factor(2)
        return Geometry.compute(scale).value
    }
    subscript(i: Int) -> Int { return i }
    struct Inner {
        func helper() {}
    }
}

struct Point: Equatable, Hashable { var x: Int }
enum Direction: String { case up, down }
actor Worker {}
protocol Drawable: AnyObject {
    func draw(in rect: Rect)
}
extension Shape: CustomStringConvertible {
    func scaled(by f: Double) -> Shape { Shape(sides: sides) }
}
typealias Pair = (Int, Int)
let MAX_SIDES = 12
let counter = 0
func top<T: Equatable>(_ a: T) throws -> Int {
    func nested() {}
    return 1
}
"#;

#[test]
fn definitions_with_qualified_names_parents_and_lines() {
    let fx = run(PATH, SHAPES);
    assert!(!fx.has_errors);
    assert_eq!(fx.nodes[0].kind, NodeKind::File);
    assert_eq!(fx.nodes[0].qualified_name, PATH);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Class, "Geometry.Shapes.Shape", 0, 7, 25),
            (Constant, "Geometry.Shapes.Shape.unit", 1, 8, 8),
            (Method, "Geometry.Shapes.Shape.init", 1, 10, 13),
            (Method, "Geometry.Shapes.Shape.deinit", 1, 14, 14),
            (Method, "Geometry.Shapes.Shape.area", 1, 17, 20),
            (Method, "Geometry.Shapes.Shape.subscript", 1, 21, 21),
            (Class, "Geometry.Shapes.Shape.Inner", 1, 22, 24),
            (Method, "Geometry.Shapes.Shape.Inner.helper", 7, 23, 23),
            (Class, "Geometry.Shapes.Point", 0, 27, 27),
            (Enum, "Geometry.Shapes.Direction", 0, 28, 28),
            (Class, "Geometry.Shapes.Worker", 0, 29, 29),
            (Interface, "Geometry.Shapes.Drawable", 0, 30, 32),
            (Method, "Geometry.Shapes.Drawable.draw", 12, 31, 31),
            // The extension is not stored; its members are qualified by the extended type.
            (Method, "Geometry.Shapes.Shape.scaled", 0, 34, 34),
            (Type, "Geometry.Shapes.Pair", 0, 36, 36),
            (Constant, "Geometry.Shapes.MAX_SIDES", 0, 37, 37),
            (Function, "Geometry.Shapes.top", 0, 39, 42),
            (Function, "Geometry.Shapes.top.nested", 17, 40, 40),
        ]
    );
    let names: Vec<&str> = fx.nodes[1..].iter().map(|n| n.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "Shape",
            "unit",
            "init",
            "deinit",
            "area",
            "subscript",
            "Inner",
            "helper",
            "Point",
            "Direction",
            "Worker",
            "Drawable",
            "draw",
            "scaled",
            "Pair",
            "MAX_SIDES",
            "top",
            "nested"
        ]
    );
}

#[test]
fn locals_instance_properties_and_calls_are_not_definitions() {
    let fx = run(PATH, SHAPES);
    for absent in [
        "sides", "counter", "scale", "x", "up", "log", "factor", "compute",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn signatures_keep_attributes_and_drop_bodies() {
    let fx = run(PATH, SHAPES);
    let sig = |q: &str| node(&fx, q).signature.clone().unwrap_or_default();
    assert_eq!(
        sig("Geometry.Shapes.Shape"),
        "@objc @MainActor\npublic class Shape: NSObject, Drawable, Codable"
    );
    assert_eq!(
        sig("Geometry.Shapes.Shape.area"),
        "@discardableResult\nfunc area() -> Double"
    );
    assert_eq!(sig("Geometry.Shapes.Shape.init"), "init(sides: Int)");
    assert_eq!(sig("Geometry.Shapes.Shape.deinit"), "deinit");
    assert_eq!(
        sig("Geometry.Shapes.Shape.subscript"),
        "subscript(i: Int) -> Int"
    );
    assert_eq!(sig("Geometry.Shapes.Shape.unit"), "static let unit = 1.0");
    assert_eq!(
        sig("Geometry.Shapes.Drawable.draw"),
        "func draw(in rect: Rect)"
    );
    assert_eq!(sig("Geometry.Shapes.Pair"), "typealias Pair = (Int, Int)");
    assert_eq!(
        sig("Geometry.Shapes.top"),
        "func top<T: Equatable>(_ a: T) throws -> Int"
    );
}

#[test]
fn doc_comments_above_attributes() {
    let fx = run(PATH, SHAPES);
    assert_eq!(
        node(&fx, "Geometry.Shapes.Shape").docstring.as_deref(),
        Some("A drawable shape.\nSecond line.")
    );
    assert_eq!(
        node(&fx, "Geometry.Shapes.Shape.area").docstring.as_deref(),
        Some("Area in square units.")
    );
    assert_eq!(node(&fx, "Geometry.Shapes.Point").docstring, None);
    // The class starts at its first attribute, its line is the name's.
    let shape = node(&fx, "Geometry.Shapes.Shape");
    assert_eq!(&SHAPES[shape.start_byte as usize..][..5], "@objc");
}

#[test]
fn references_of_every_kind() {
    let fx = run(PATH, SHAPES);
    let imports: Vec<(&str, &str, u32)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| (r.module.as_deref().unwrap_or(""), r.name.as_str(), r.line))
        .collect();
    assert_eq!(
        imports,
        vec![("Foundation", "", 1), ("Collections", "Deque", 2)]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Decorator),
        vec![
            (1, "objc", 6),
            (1, "MainActor", 6),
            (5, "discardableResult", 16)
        ]
    );
    assert_eq!(kind_refs(&fx, RefKind::Inherits), vec![(1, "NSObject", 7)]);
    assert_eq!(
        kind_refs(&fx, RefKind::Implements),
        vec![
            (1, "Drawable", 7),
            (1, "Codable", 7),
            (9, "Equatable", 27),
            (9, "Hashable", 27),
            (10, "String", 28),
            (12, "AnyObject", 30),
            // An extension is no stored node: its conformance lands on the enclosing one.
            (0, "CustomStringConvertible", 33),
        ]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Call),
        vec![
            (3, "super.init", 12),
            (4, "log", 14),
            (5, "factor", 18),
            (5, "Geometry.compute", 19),
            (14, "Shape", 34),
        ]
    );
}

#[test]
fn multi_binding_constants_and_generic_extensions() {
    let src = "struct V {\n    static let a = 1, b = 2\n    static var c = 3\n}\n\
               extension Array where Element: Equatable {\n    static func == (l: V, r: V) -> Bool { true }\n}\n";
    let fx = run("V.swift", src);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Class, "V.V", 0, 1, 4),
            (Constant, "V.V.a", 1, 2, 2),
            (Constant, "V.V.b", 1, 2, 2),
            (Method, "V.Array.==", 0, 6, 6),
        ]
    );
    assert_eq!(
        node(&fx, "V.V.b").signature.as_deref(),
        Some("static let a = 1, b = 2")
    );
}

#[test]
fn syntax_errors_keep_surrounding_definitions() {
    let src = "class Before {\n    func ok() {}\n}\nfunc broken() { let = }\nclass After {\n    func fine() {}\n}\n";
    let fx = run("Sources/App/Broken.swift", src);
    assert!(fx.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Class, "App.Broken.Before", 0, 1, 3),
            (Method, "App.Broken.Before.ok", 1, 2, 2),
            (Function, "App.Broken.broken", 0, 4, 4),
            (Class, "App.Broken.After", 0, 5, 7),
            (Method, "App.Broken.After.fine", 4, 6, 6),
        ]
    );
}
