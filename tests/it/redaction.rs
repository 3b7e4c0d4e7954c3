//! Secrets never enter the database or the artifact: a fixture with one planted secret of
//! every known format, in code and configuration files, must leave no trace of any value,
//! a typed placeholder in each place, a report by path, line and type, and every line where
//! it was (definitions after a multi-line key keep their line numbers).

use crate::common::artifact_in;
use crate::common::{dump, options, write_tree};
use codebase_indexer::ArtifactWrite;

/// (kind, the secret as planted). Built from pieces so this file holds no literal secret.
fn planted() -> Vec<(&'static str, String)> {
    let r = |prefix: &str, body: &str| format!("{prefix}{body}");
    vec![
        ("aws-key", r("AKIA", "Z7QXW3PLMN4RTY2K")),
        (
            "aws-secret",
            r("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYzq8Hk2Lm9T"),
        ),
        (
            "github-token",
            r("ghp_", "4fT9xQ2mLp8ZkV3nR7bW1cY6hJ0sD5gA2eUu"),
        ),
        ("gitlab-token", r("glpat-", "x9Kq2LmZ7pR4tV8nW3bY")),
        (
            "slack-token",
            r("xoxb-", "2849310574-8391046251-Qw7Er9Ty1Ui3"),
        ),
        ("stripe-key", r("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc")),
        (
            "google-api-key",
            r("AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
        ),
        (
            "anthropic-key",
            r("sk-ant-", "api03-Xk2Lq9Zp7Wm4Rt8Vn3Bq5Yc1Hd6Fs0Ga"),
        ),
        (
            "openai-key",
            r("sk-proj-", "Tq8Lm2Zx9Pw4Rk7Vn3Bc5Yh1Jd6Fs0GaQe2Wr"),
        ),
        (
            "jwt",
            r(
                "eyJhbGciOiJIUzI1NiJ9.",
                "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ),
        ),
        ("url-password", r("Xq9", "vLm2Tz7Rk")),
        ("password", r("Hunter", "2-Zq9!xLp")),
        (
            "high-entropy",
            r("Q7vX2kLp9ZrT4mWb8N", "cY3hJd6FsGa1Ue5Rq0Wz"),
        ),
    ]
}

#[test]
fn planted_secrets_of_every_kind_never_reach_the_database_or_the_artifact() {
    let secrets = planted();
    let s = |kind: &str| &secrets.iter().find(|(k, _)| *k == kind).unwrap().1;
    let key_block = format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7yq3kR9vXbL2mTq8ZpW4nYc6", "Hd1Fs0GaQe2Wr5Tt8Uy3Ii7Oo9Pp1Aa2Ss4Dd6Ff"
    );
    let settings = format!(
        "AWS_ACCESS_KEY_ID = \"{}\"\n\
         AWS_SECRET_ACCESS_KEY = \"{}\"\n\
         GITHUB = \"{}\"\n\
         GITLAB = \"{}\"\n\
         SLACK = \"{}\"\n\
         STRIPE = \"{}\"\n\
         GOOGLE = \"{}\"\n\
         CLAUDE = \"{}\"\n\
         OPENAI = \"{}\"\n\
         SESSION = \"{}\"\n\
         DATABASE_URL = \"postgres://app:{}@db.internal:5432/app\"\n\
         DB_PASSWORD = \"{}\"\n\
         SIGNING_SALT = \"{}\"\n\
         KEY = \"\"\"{key_block}\"\"\"\n\
         \n\
         def connect():\n    return DATABASE_URL\n",
        s("aws-key"),
        s("aws-secret"),
        s("github-token"),
        s("gitlab-token"),
        s("slack-token"),
        s("stripe-key"),
        s("google-api-key"),
        s("anthropic-key"),
        s("openai-key"),
        s("jwt"),
        s("url-password"),
        s("password"),
        s("high-entropy"),
    );
    let config = format!(
        "services:\n  api:\n    token: \"{}\"\n    password: \"{}\"\n",
        s("github-token"),
        s("password")
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(
        &root,
        &[
            ("app/settings.py", settings.as_str()),
            ("deploy/config.yml", config.as_str()),
            (".env", &format!("STRIPE_KEY={}\n", s("stripe-key"))),
        ],
    );
    let db = dir.path().join("index.db");
    let mut o = options(&root, &db);
    o.artifact = ArtifactWrite::Always;
    let summary = crate::common::run(&o).unwrap();

    // Nothing of any secret anywhere in the database (every table, as text) or the artifact.
    let everything: Vec<String> = [
        "SELECT * FROM files",
        "SELECT * FROM file_contents",
        "SELECT * FROM nodes",
        "SELECT * FROM refs",
        "SELECT * FROM unresolved",
        "SELECT * FROM redactions",
        "SELECT * FROM meta",
    ]
    .iter()
    .flat_map(|sql| dump(&db, sql))
    .collect();
    let raw = zstd::decode_all(&std::fs::read(artifact_in(&root)).unwrap()[..]).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    for (kind, secret) in &secrets {
        for row in &everything {
            assert!(!row.contains(secret.as_str()), "{kind} stored: {row}");
        }
        assert!(!raw.contains(secret.as_str()), "{kind} in the artifact");
    }
    assert!(
        !raw.contains("MIIEowIBAAKCAQEA"),
        "private key in the artifact"
    );

    // Every planted secret was found, typed and placed.
    let mut kinds: Vec<(String, u32, &str)> = summary
        .redactions
        .iter()
        .map(|r| (r.path.clone(), r.line, r.kind))
        .collect();
    kinds.sort();
    let expected_settings = [
        "aws-key",
        "aws-secret",
        "github-token",
        "gitlab-token",
        "slack-token",
        "stripe-key",
        "google-api-key",
        "anthropic-key",
        "openai-key",
        "jwt",
        "url-password",
        "password",
        "high-entropy",
        "private-key",
    ];
    for (i, kind) in expected_settings.iter().enumerate() {
        assert!(
            kinds.contains(&("app/settings.py".to_string(), i as u32 + 1, kind)),
            "{kind} on line {}: {kinds:?}",
            i + 1
        );
    }
    assert!(kinds.contains(&("deploy/config.yml".into(), 3, "github-token")));
    assert!(kinds.contains(&("deploy/config.yml".into(), 4, "password")));
    assert_eq!(kinds.len(), expected_settings.len() + 2, "{kinds:?}");

    // Placeholders stand where the secrets were; lines keep their numbers.
    let content = dump(
        &db,
        "SELECT content FROM file_contents c JOIN files f ON f.id = c.file_id \
         WHERE f.path = 'app/settings.py'",
    )
    .join("");
    assert!(content.contains("AWS_ACCESS_KEY_ID = \\\"<redacted:aws-key>\\\""));
    assert!(content.contains("postgres://app:<redacted:url-password>@db.internal"));
    let line: Vec<String> = dump(
        &db,
        "SELECT start_line FROM nodes WHERE qualified_name = 'app.settings.connect'",
    );
    assert_eq!(line, ["Integer(19)"]);

    // `.env` files are not indexed at all.
    assert!(dump(&db, "SELECT path FROM files WHERE path LIKE '%.env%'").is_empty());
    // The report is in the database too (status reads it), without values.
    assert_eq!(
        dump(&db, "SELECT count(*) FROM redactions"),
        [format!("Integer({})", kinds.len())]
    );
}

/// `.env` and its variants are skipped unless asked for; asked for, they are indexed with
/// every value redacted but numbers and booleans, and reported like any other secret.
#[test]
fn env_files_are_skipped_unless_included_and_then_every_value_is_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let key = format!("{}{}", "AKIA", "Z7QXW3PLMN4RTY2K");
    let env = format!("# local\nexport DB_NAME=app_dev\nAWS_KEY={key}\nPORT=5432\n");
    write_tree(
        &root,
        &[
            ("app.py", "def main():\n    pass\n"),
            (".env", env.as_str()),
            (".env.production", "SESSION_NAME=prod\n"),
            ("deploy/staging.env", "REGION=eu-west-1\n"),
            (".envrc", "export LAYOUT=python\n"),
        ],
    );
    let env_files = [".env", ".env.production", ".envrc", "deploy/staging.env"];

    let db = dir.path().join("index.db");
    let summary = crate::common::run(&options(&root, &db)).unwrap();
    assert_eq!(summary.skipped.get("env_file"), Some(&env_files.len()));
    assert_eq!(dump(&db, "SELECT path FROM files"), ["Text(\"app.py\")"]);

    let mut o = options(&root, &db);
    o.include_env = true;
    let summary = crate::common::run(&o).unwrap();
    assert_eq!(summary.skipped.get("env_file"), None);
    let mut found: Vec<(&str, u32, &str)> = summary
        .redactions
        .iter()
        .map(|r| (r.path.as_str(), r.line, r.kind))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (".env", 2, "env-value"),
            (".env", 3, "aws-key"),
            (".env.production", 1, "env-value"),
            (".envrc", 1, "env-value"),
            ("deploy/staging.env", 1, "env-value"),
        ]
    );
    let content = dump(
        &db,
        "SELECT content FROM file_contents c JOIN files f ON f.id = c.file_id \
         WHERE f.path = '.env'",
    )
    .join("");
    assert!(
        content.contains(
            "# local\\nexport DB_NAME=<redacted:env-value>\\nAWS_KEY=<redacted:aws-key>\\nPORT=5432"
        ),
        "{content}"
    );
    for row in dump(&db, "SELECT * FROM file_contents") {
        for value in ["app_dev", key.as_str(), "prod\\n", "eu-west-1", "python"] {
            assert!(!row.contains(value), "{value} stored: {row}");
        }
    }

    // Asked for no more, they leave the index on the next run.
    crate::common::run(&options(&root, &db)).unwrap();
    assert_eq!(dump(&db, "SELECT path FROM files"), ["Text(\"app.py\")"]);
}
