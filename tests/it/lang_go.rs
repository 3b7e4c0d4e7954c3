//! Go extraction: functions, receiver-qualified methods, type specs, interface methods,
//! constants, doc comments, calls, imports, embedding, package-path module names and
//! recovery from syntax errors.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const CLIENT: &str = r#"// Package http does things.
package http

import (
	"fmt"
	nethttp "net/http"
	. "strings"
	_ "embed"
)

import "os"

// MaxSize is the largest body.
const MaxSize = 10

const (
	A, B = 1, 2
	// C counts.
	C = iota
)

var verbose = false

// Client talks to servers.
// It is safe for concurrent use.
type Client struct {
	io.Reader
	*Base
	List[int]
	name string
}

type (
	// Handler serves.
	Handler interface {
		fmt.Stringer
		~int | ~string
		Serve(w Writer) error
	}
	ID = int
	Num int
	Pair[K comparable, V any] struct{ k K }
)

// Do sends a request.
func (c *Client) Do(req *Request) (*Response, error) {
	fmt.Println("x")
	c.send(req)
	f := func() { inner() }
	f()
	return nil, nil
}

func (p Pair[K, V]) Key() K { return p.k }

func Generic[T any](x T) T {
	return Must[T](x)
}

func main() {
	type local struct{}
	go run()
	defer cleanup()
	func() {}()
}
"#;

#[test]
fn go_definitions_nesting_and_lines() {
    let x = run("net/http/client.go", CLIENT);
    assert!(!x.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&x),
        vec![
            (Constant, "net/http.MaxSize", 0, 14, 14),
            (Constant, "net/http.A", 0, 17, 17),
            (Constant, "net/http.B", 0, 17, 17),
            (Constant, "net/http.C", 0, 19, 19),
            (Class, "net/http.Client", 0, 26, 31),
            (Interface, "net/http.Handler", 0, 35, 39),
            (Method, "net/http.Handler.Serve", 6, 38, 38),
            (Type, "net/http.ID", 0, 40, 40),
            (Type, "net/http.Num", 0, 41, 41),
            (Class, "net/http.Pair", 0, 42, 42),
            // Methods are qualified by their receiver type but sit in the file.
            (Method, "net/http.Client.Do", 0, 46, 52),
            (Method, "net/http.Pair.Key", 0, 54, 54),
            (Function, "net/http.Generic", 0, 56, 58),
            (Function, "net/http.main", 0, 60, 65),
            (Class, "net/http.main.local", 14, 61, 61),
        ]
    );
    // Package variables, locals and function literals are not definitions.
    for absent in ["verbose", "f", "req", "name", "k"] {
        assert!(
            x.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn go_signatures_and_docs() {
    let x = run("net/http/client.go", CLIENT);
    assert_eq!(sig(&x, "net/http.MaxSize"), "const MaxSize = 10");
    assert_eq!(
        doc(&x, "net/http.MaxSize"),
        Some("MaxSize is the largest body.")
    );
    assert_eq!(sig(&x, "net/http.A"), "A, B = 1, 2");
    assert_eq!(doc(&x, "net/http.C"), Some("C counts."));
    assert_eq!(sig(&x, "net/http.Client"), "type Client struct");
    assert_eq!(
        doc(&x, "net/http.Client"),
        Some("Client talks to servers.\nIt is safe for concurrent use.")
    );
    assert_eq!(sig(&x, "net/http.Handler"), "Handler interface");
    assert_eq!(doc(&x, "net/http.Handler"), Some("Handler serves."));
    assert_eq!(sig(&x, "net/http.Handler.Serve"), "Serve(w Writer) error");
    assert_eq!(sig(&x, "net/http.ID"), "ID = int");
    assert_eq!(sig(&x, "net/http.Pair"), "Pair[K comparable, V any] struct");
    assert_eq!(
        sig(&x, "net/http.Client.Do"),
        "func (c *Client) Do(req *Request) (*Response, error)"
    );
    assert_eq!(doc(&x, "net/http.Client.Do"), Some("Do sends a request."));
    assert_eq!(sig(&x, "net/http.Pair.Key"), "func (p Pair[K, V]) Key() K");
    assert_eq!(sig(&x, "net/http.Generic"), "func Generic[T any](x T) T");
    assert_eq!(doc(&x, "net/http.Generic"), None);
}

#[test]
fn go_references() {
    let x = run("net/http/client.go", CLIENT);
    use RefKind::*;
    let file = "net/http/client.go";
    let refs: Vec<_> = refs(&x)
        .into_iter()
        .filter(|r| matches!(r.1, Import | Inherits | Call))
        .collect();
    assert_eq!(
        refs,
        vec![
            (file, Import, "", Some("fmt"), None, 5),
            (file, Import, "", Some("net/http"), Some("nethttp"), 6),
            (file, Import, "", Some("strings"), Some("."), 7),
            (file, Import, "", Some("embed"), Some("_"), 8),
            (file, Import, "", Some("os"), None, 11),
            ("net/http.Client", Inherits, "io.Reader", None, None, 27),
            ("net/http.Client", Inherits, "Base", None, None, 28),
            ("net/http.Client", Inherits, "List", None, None, 29),
            // `~int | ~string` is a type set, not an embedded interface.
            ("net/http.Handler", Inherits, "fmt.Stringer", None, None, 36),
            ("net/http.Client.Do", Call, "fmt.Println", None, None, 47),
            ("net/http.Client.Do", Call, "c.send", None, None, 48),
            ("net/http.Client.Do", Call, "inner", None, None, 49),
            ("net/http.Client.Do", Call, "f", None, None, 50),
            ("net/http.Generic", Call, "Must", None, None, 57),
            ("net/http.main", Call, "run", None, None, 62),
            ("net/http.main", Call, "cleanup", None, None, 63),
        ]
    );
}

#[test]
fn go_module_names_are_package_paths() {
    let x = run(
        "net/http/client_test.go",
        "package http_test\n\nfunc TestX() {}\n",
    );
    assert_eq!(x.nodes[1].qualified_name, "net/http/http_test.TestX");
    let x = run(
        "net/http/client_test.go",
        "package http\n\nfunc TestY() {}\n",
    );
    assert_eq!(x.nodes[1].qualified_name, "net/http.TestY");
    let x = run("cmd/tool/main.go", "package main\n\nfunc main() {}\n");
    assert_eq!(x.nodes[1].qualified_name, "cmd/tool.main");
    let x = run(
        "doc.go",
        "package lib\n\ntype T struct{}\n\nfunc (t T) M() {}\n",
    );
    assert_eq!(x.nodes[1].qualified_name, "lib.T");
    assert_eq!(x.nodes[2].qualified_name, "lib.T.M");
    assert_eq!(x.nodes[2].kind, NodeKind::Method);
}

#[test]
fn go_syntax_error_keeps_surrounding_definitions() {
    let src = r#"package http

func Before() int { return 1 }

func Broken( {
	x :=
}

type After struct{}

func (a *After) Run() { Before() }
"#;
    let x = run("net/http/broken.go", src);
    assert!(x.has_errors);
    let names: Vec<&str> = x.nodes[1..]
        .iter()
        .map(|n| n.qualified_name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "net/http.Before",
            "net/http.Broken",
            "net/http.After",
            "net/http.After.Run"
        ]
    );
    assert_eq!(node(&x, "net/http.After.Run").start_line, 11);
    assert_eq!(
        refs(&x),
        vec![
            ("net/http.Broken", RefKind::Local, "x", None, None, 6),
            (
                "net/http.After.Run",
                RefKind::Local,
                "a",
                Some("*After"),
                None,
                11
            ),
            (
                "net/http.After.Run",
                RefKind::Call,
                "Before",
                None,
                None,
                11
            )
        ]
    );
}

const BINDINGS: &str = r#"package server

type Server struct {
	addr, name string
	conn       net.Conn
	*Base
	log.Logger
	onClose func()
}

var Default = NewServer("")

func (s *Server) Serve(h Handler, opts ...Option) (n int, err error) {
	c := NewConn(s.addr)
	r, err := pkg.Open(1)
	var d Dialer
	var e, f = &Endpoint{}, new(pkg.Frame)
	g := x.(*Guard)
	for k, v := range xs {
	}
	switch w := h.(type) {
	}
	select {
	case m, ok := <-ch:
	}
	q := Queue[int]{}
	run := func(job *Job) {}
	http.HandleFunc("/", s.handle, nil, helper, cfg.Name)
	_ = []int{1}
	return 0, nil
}

func plain[T Handler](t T) {
	var anon struct{ inner *Inner }
}
"#;

#[test]
fn go_locals_fields_and_references() {
    let x = run("server/server.go", BINDINGS);
    assert!(!x.has_errors);
    use RefKind::*;
    let serve = "server.Server.Serve";
    let bindings: Vec<_> = refs(&x)
        .into_iter()
        .filter(|r| matches!(r.1, Local | Field | Reference) || r.2 == "Queue")
        .collect();
    assert_eq!(
        bindings,
        vec![
            ("server.Server", Field, "addr", Some("string"), None, 4),
            ("server.Server", Field, "name", Some("string"), None, 4),
            ("server.Server", Field, "conn", Some("net.Conn"), None, 5),
            // Embedded fields are named by their type.
            ("server.Server", Field, "Base", Some("Base"), None, 6),
            (
                "server.Server",
                Field,
                "Logger",
                Some("log.Logger"),
                None,
                7
            ),
            ("server.Server", Field, "onClose", Some("func()"), None, 8),
            // A package variable is a local of the file and, typed, a field of it (seen from
            // the package's other files).
            (
                "server/server.go",
                Local,
                "Default",
                Some("NewServer()"),
                None,
                11
            ),
            (
                "server/server.go",
                Field,
                "Default",
                Some("NewServer()"),
                None,
                11
            ),
            (serve, Local, "s", Some("*Server"), None, 13),
            (serve, Local, "h", Some("Handler"), None, 13),
            // Variadic parameters are slices.
            (serve, Local, "opts", None, None, 13),
            (serve, Local, "n", Some("int"), None, 13),
            (serve, Local, "err", Some("error"), None, 13),
            (serve, Local, "c", Some("NewConn()"), None, 14),
            (serve, Reference, "s.addr", None, None, 14),
            // One call for two names: the first takes its first result.
            (serve, Local, "r", Some("pkg.Open()"), None, 15),
            (serve, Local, "err", Some("error"), None, 15),
            (serve, Local, "d", Some("Dialer"), None, 16),
            (serve, Local, "e", Some("Endpoint"), None, 17),
            (serve, Local, "f", Some("*pkg.Frame"), None, 17),
            (serve, Local, "g", Some("*Guard"), None, 18),
            (serve, Local, "k", None, None, 19),
            (serve, Local, "v", None, None, 19),
            (serve, Local, "w", None, None, 21),
            (serve, Local, "m", None, None, 24),
            (serve, Local, "ok", None, None, 24),
            (serve, Local, "q", Some("Queue"), None, 26),
            // A composite literal instantiates its type.
            (serve, Call, "Queue", None, None, 26),
            (serve, Local, "run", None, None, 27),
            (serve, Local, "job", Some("*Job"), None, 27),
            (serve, Reference, "s.handle", None, None, 28),
            (serve, Reference, "helper", None, None, 28),
            (serve, Reference, "cfg.Name", None, None, 28),
            // A type parameter stands for its constraint.
            ("server.plain", Local, "T", Some("Handler"), None, 33),
            ("server.plain", Local, "t", Some("T"), None, 33),
            (
                "server.plain",
                Local,
                "anon",
                Some("struct{ inner *Inner }"),
                None,
                34
            ),
        ]
    );
}
