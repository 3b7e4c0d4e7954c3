//! PHP extraction: definitions, qualified names, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const PATH: &str = "src/Models/User.php";

const USER: &str = r#"<?php
namespace App\Models;

use Illuminate\Database\Model as BaseModel;
use App\Contracts\{Jsonable, Support\Arrayable as Arr};
use function App\Support\helper;
require_once 'vendor/autoload.php';

const VERSION = '2.0';

/** A registered user. */
#[Entity, Table("users")]
final class User extends BaseModel implements Jsonable, \Countable
{
    use HasFactory, SoftDeletes;

    const ROLE_ADMIN = 'admin', ROLE_USER = 'user';
    private int $count = 0;

    // Persists the user.
    #[Override]
    public function save(array $opts = []): bool
    {
        $this->validate();
        $query = new Builder($this);
        parent::save($opts);
        Cache::forget('users');
        $this->profile?->touch();
        $cb = function ($x) { return strtoupper($x); };
        return true;
    }

    abstract protected function rules(): array;
}

interface Shape extends Countable { public function area(): float; }

trait Greets
{
    public function greet() { return helper(); }
}

enum Status: string implements HasLabel
{
    case Active = 'active';
    public function label(): string { return ucfirst($this->value); }
}

function make_user(string $name): User
{
    function nested() {}
    return new User();
}
"#;

#[test]
fn definitions_with_qualified_names_parents_and_lines() {
    let fx = run(PATH, USER);
    assert!(!fx.has_errors);
    use NodeKind::*;
    // `namespace App\Models;` names everything in the file.
    assert_eq!(
        defs(&fx),
        vec![
            (Constant, "App.Models.VERSION", 0, 9, 9),
            (Class, "App.Models.User", 0, 13, 34),
            (Constant, "App.Models.User.ROLE_ADMIN", 2, 17, 17),
            (Constant, "App.Models.User.ROLE_USER", 2, 17, 17),
            (Method, "App.Models.User.save", 2, 22, 31),
            (Method, "App.Models.User.rules", 2, 33, 33),
            (Interface, "App.Models.Shape", 0, 36, 36),
            (Method, "App.Models.Shape.area", 7, 36, 36),
            (Interface, "App.Models.Greets", 0, 38, 41),
            (Method, "App.Models.Greets.greet", 9, 40, 40),
            (Enum, "App.Models.Status", 0, 43, 47),
            (Method, "App.Models.Status.label", 11, 46, 46),
            (Function, "App.Models.make_user", 0, 49, 53),
            (Function, "App.Models.make_user.nested", 13, 51, 51),
        ]
    );
}

#[test]
fn properties_variables_closures_and_enum_cases_are_not_definitions() {
    let fx = run(PATH, USER);
    for absent in [
        "count", "$count", "query", "$query", "cb", "Active", "Builder", "validate",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
    assert_eq!(fx.nodes.len(), 15);
}

#[test]
fn signatures_keep_attributes_and_drop_bodies() {
    let fx = run(PATH, USER);
    let sig = |q: &str| node(&fx, q).signature.clone().unwrap_or_default();
    assert_eq!(
        sig("App.Models.User"),
        "#[Entity, Table(\"users\")]\nfinal class User extends BaseModel implements Jsonable, \\Countable"
    );
    assert_eq!(
        sig("App.Models.User.save"),
        "#[Override]\npublic function save(array $opts = []): bool"
    );
    assert_eq!(
        sig("App.Models.User.rules"),
        "abstract protected function rules(): array;"
    );
    assert_eq!(sig("App.Models.VERSION"), "const VERSION = '2.0';");
    // Constants sharing one declaration are reported per element.
    assert_eq!(sig("App.Models.User.ROLE_USER"), "ROLE_USER = 'user'");
    assert_eq!(
        sig("App.Models.Status"),
        "enum Status: string implements HasLabel"
    );
    assert_eq!(
        sig("App.Models.make_user"),
        "function make_user(string $name): User"
    );
}

#[test]
fn doc_comments() {
    let fx = run(PATH, USER);
    let doc = |q: &str| node(&fx, q).docstring.clone();
    assert_eq!(
        doc("App.Models.User").as_deref(),
        Some("A registered user.")
    );
    assert_eq!(
        doc("App.Models.User.save").as_deref(),
        Some("Persists the user.")
    );
    assert_eq!(doc("App.Models.Shape"), None);
    // The class starts at its attribute; its line is the name's.
    let user = node(&fx, "App.Models.User");
    assert_eq!(&USER[user.start_byte as usize..][..8], "#[Entity");
}

#[test]
fn references_of_every_kind() {
    let fx = run(PATH, USER);
    let imports: Vec<(&str, &str, Option<&str>, u32)> = fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .map(|r| {
            (
                r.module.as_deref().unwrap_or(""),
                r.name.as_str(),
                r.alias.as_deref(),
                r.line,
            )
        })
        .collect();
    assert_eq!(
        imports,
        vec![
            ("Illuminate\\Database", "Model", Some("BaseModel"), 4),
            ("App\\Contracts", "Jsonable", None, 5),
            ("App\\Contracts\\Support", "Arrayable", Some("Arr"), 5),
            ("App\\Support", "helper", None, 6),
            ("vendor/autoload.php", "", None, 7),
        ]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Inherits),
        vec![(2, "BaseModel", 13), (7, "Countable", 36)]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Implements),
        vec![
            (2, "Jsonable", 13),
            (2, "\\Countable", 13),
            (2, "HasFactory", 15),
            (2, "SoftDeletes", 15),
            (11, "HasLabel", 43),
        ]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Decorator),
        vec![(2, "Entity", 12), (2, "Table", 12), (5, "Override", 21)]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Call),
        vec![
            (5, "$this->validate", 24),
            (5, "Builder", 25),
            (5, "parent::save", 26),
            (5, "Cache::forget", 27),
            (5, "$this->profile?->touch", 28),
            (5, "strtoupper", 29),
            (10, "helper", 40),
            (12, "ucfirst", 46),
            (13, "User", 52),
        ]
    );
}

#[test]
fn braced_namespaces_are_modules() {
    let src = "<?php\nnamespace Lib\\Util {\n    /** Helps. */\n    function help(#[SensitiveParameter] $p) { return new \\Foo\\Bar(); }\n    include __DIR__ . '/x.php';\n}\n";
    let fx = run("lib/util.php", src);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Module, "Lib.Util", 0, 2, 6),
            (Function, "Lib.Util.help", 1, 4, 4),
        ]
    );
    assert_eq!(
        node(&fx, "Lib.Util.help").docstring.as_deref(),
        Some("Helps.")
    );
    // A parameter attribute is not a decorator of the function.
    assert!(kind_refs(&fx, RefKind::Decorator).is_empty());
    assert_eq!(kind_refs(&fx, RefKind::Call), vec![(2, "\\Foo\\Bar", 4)]);
    let import = fx
        .refs
        .iter()
        .find(|r| r.kind == RefKind::Import)
        .expect("include");
    assert_eq!(import.module.as_deref(), Some("__DIR__ . '/x.php'"));
}

#[test]
fn syntax_errors_keep_surrounding_definitions() {
    let src = "<?php\nclass Before {\n    public function ok() {}\n}\nfunction broken() { $x = ; }\nclass After {\n    public function fine() {}\n}\n";
    let fx = run("broken.php", src);
    assert!(fx.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Class, "Before", 0, 2, 4),
            (Method, "Before.ok", 1, 3, 3),
            (Function, "broken", 0, 5, 5),
            (Class, "After", 0, 6, 8),
            (Method, "After.fine", 4, 7, 7),
        ]
    );
}
