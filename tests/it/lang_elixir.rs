//! Elixir extraction: definitions, qualified names, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const PATH: &str = "lib/my_app/accounts.ex";

const ACCOUNTS: &str = r#"defmodule MyApp.Accounts do
  @moduledoc """
  The accounts context.

  Users and teams.
  """
  @behaviour MyApp.Context
  alias MyApp.Repo
  alias MyApp.{User, Team}
  alias MyApp.Billing.Invoice, as: Bill
  import Ecto.Query, only: [from: 2, where: 3]
  require Logger
  use GenServer

  @doc """
  Fetches a user.
  """
  @spec get_user(integer) :: User.t()
  def get_user(id) when is_integer(id) do
    user = Repo.get(User, id)
    user |> audit()
  end

  @doc "Writes an audit entry."
  defp audit(user), do: Logger.info(user)

  @doc false
  def internal, do: :ok

  # Guards positive numbers.
  defguard is_positive(n) when n > 0

  defmacro trace(expr), do: quote(do: unquote(expr))

  defmodule Query do
    def recent(q) do
      if q, do: from(u in q, where: u.active), else: nil
    end
  end
end

defprotocol MyApp.Sizer do
  @doc "The size."
  def size(data)
end

defimpl MyApp.Sizer, for: Map do
  def size(map), do: map_size(map)
end
"#;

#[test]
fn definitions_with_qualified_names_parents_and_lines() {
    let fx = run(PATH, ACCOUNTS);
    assert!(!fx.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Module, "MyApp.Accounts", 0, 1, 40),
            // Functions in a module stay Functions: a module is not a type.
            (Function, "MyApp.Accounts.get_user", 1, 19, 22),
            (Function, "MyApp.Accounts.audit", 1, 25, 25),
            (Function, "MyApp.Accounts.internal", 1, 28, 28),
            (Function, "MyApp.Accounts.is_positive", 1, 31, 31),
            (Function, "MyApp.Accounts.trace", 1, 33, 33),
            (Module, "MyApp.Accounts.Query", 1, 35, 39),
            (Function, "MyApp.Accounts.Query.recent", 7, 36, 38),
            (Interface, "MyApp.Sizer", 0, 42, 45),
            (Method, "MyApp.Sizer.size", 9, 44, 44),
            (Class, "MyApp.Sizer.Map", 0, 47, 49),
            (Method, "MyApp.Sizer.Map.size", 11, 48, 48),
        ]
    );
    assert_eq!(node(&fx, "MyApp.Accounts.Query").name, "Query");
    assert_eq!(node(&fx, "MyApp.Accounts").name, "MyApp.Accounts");
}

#[test]
fn heads_variables_and_attributes_are_not_definitions() {
    let fx = run(PATH, ACCOUNTS);
    for absent in [
        "user",
        "id",
        "moduledoc",
        "doc",
        "spec",
        "Repo",
        "from",
        "audit(user)",
    ] {
        assert!(
            fx.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
    assert_eq!(fx.nodes.len(), 13);
}

#[test]
fn signatures_without_bodies() {
    let fx = run(PATH, ACCOUNTS);
    let sig = |q: &str| node(&fx, q).signature.clone().unwrap_or_default();
    assert_eq!(sig("MyApp.Accounts"), "defmodule MyApp.Accounts");
    assert_eq!(
        sig("MyApp.Accounts.get_user"),
        "def get_user(id) when is_integer(id)"
    );
    // The keyword form stops before `, do:`.
    assert_eq!(sig("MyApp.Accounts.audit"), "defp audit(user)");
    assert_eq!(sig("MyApp.Accounts.internal"), "def internal");
    assert_eq!(
        sig("MyApp.Accounts.is_positive"),
        "defguard is_positive(n) when n > 0"
    );
    assert_eq!(sig("MyApp.Accounts.trace"), "defmacro trace(expr)");
    assert_eq!(sig("MyApp.Sizer.size"), "def size(data)");
    assert_eq!(sig("MyApp.Sizer.Map"), "defimpl MyApp.Sizer, for: Map");
}

#[test]
fn moduledoc_doc_attributes_and_comments() {
    let fx = run(PATH, ACCOUNTS);
    let doc = |q: &str| node(&fx, q).docstring.clone();
    assert_eq!(
        doc("MyApp.Accounts").as_deref(),
        Some("The accounts context.\n\nUsers and teams.")
    );
    // `@spec` between `@doc` and `def` does not hide the doc.
    assert_eq!(
        doc("MyApp.Accounts.get_user").as_deref(),
        Some("Fetches a user.")
    );
    assert_eq!(
        doc("MyApp.Accounts.audit").as_deref(),
        Some("Writes an audit entry.")
    );
    assert_eq!(doc("MyApp.Accounts.internal"), None);
    assert_eq!(
        doc("MyApp.Accounts.is_positive").as_deref(),
        Some("Guards positive numbers.")
    );
    assert_eq!(doc("MyApp.Sizer.size").as_deref(), Some("The size."));
    assert_eq!(doc("MyApp.Accounts.Query"), None);
}

#[test]
fn references_of_every_kind() {
    let fx = run(PATH, ACCOUNTS);
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
            ("MyApp.Repo", "", None, 8),
            ("MyApp.User", "", None, 9),
            ("MyApp.Team", "", None, 9),
            ("MyApp.Billing.Invoice", "", Some("Bill"), 10),
            ("Ecto.Query", "from", None, 11),
            ("Ecto.Query", "where", None, 11),
            ("Logger", "", None, 12),
            ("GenServer", "", None, 13),
        ]
    );
    assert!(fx
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Import)
        .all(|r| r.node == 1));
    assert_eq!(
        kind_refs(&fx, RefKind::Implements),
        vec![(1, "MyApp.Context", 7), (11, "MyApp.Sizer", 47)]
    );
    // Not calls: definition heads, `@spec` types, `if`/`quote`, map field reads (`u.active`).
    assert_eq!(
        kind_refs(&fx, RefKind::Call),
        vec![
            (2, "is_integer", 19),
            (2, "Repo.get", 20),
            (2, "audit", 21),
            (3, "Logger.info", 25),
            (8, "from", 37),
            (12, "map_size", 48),
        ]
    );
    assert!(kind_refs(&fx, RefKind::Inherits).is_empty());
    assert!(kind_refs(&fx, RefKind::Decorator).is_empty());
}

#[test]
fn defimpl_without_for_and_operator_definitions() {
    let src = "defmodule Money do\n  defimpl String.Chars do\n    def to_string(m), do: format(m)\n  end\n  def a + b, do: add(a, b)\n  def run(f), do: f.(1)\nend\n";
    let fx = run("lib/money.ex", src);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Module, "Money", 0, 1, 7),
            (Class, "Money.String.Chars.Money", 1, 2, 4),
            (Method, "Money.String.Chars.Money.to_string", 2, 3, 3),
            (Function, "Money.+", 1, 5, 5),
            (Function, "Money.run", 1, 6, 6),
        ]
    );
    assert_eq!(
        kind_refs(&fx, RefKind::Call),
        vec![(3, "format", 3), (4, "add", 5), (5, "f", 6)]
    );
}

#[test]
fn syntax_errors_keep_surrounding_definitions() {
    let src = "defmodule Before do\n  def ok, do: 1\nend\n\ndefmodule Mid do\n  def broken(x) do\n    foo(,)\n  end\n\n  def fine(y), do: y\nend\n";
    let fx = run("lib/broken.ex", src);
    assert!(fx.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&fx),
        vec![
            (Module, "Before", 0, 1, 3),
            (Function, "Before.ok", 1, 2, 2),
            (Module, "Mid", 0, 5, 11),
            (Function, "Mid.broken", 3, 6, 8),
            (Function, "Mid.fine", 3, 10, 10),
        ]
    );
}
