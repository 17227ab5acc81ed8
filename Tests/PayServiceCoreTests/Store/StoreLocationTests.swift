@testable import PayServiceCore
import Testing

/// `--database`: a PostgreSQL URL names a server, anything else a SQLite file.
@Suite("Store location")
struct StoreLocationTests {
  static let environment = ["USER": "shop", "PGPASSWORD": "from-env"]

  @Test("paths, :memory: and other schemes are SQLite")
  func sqlite() throws {
    for argument in ["payservice.sqlite", ":memory:", "/var/db/orders.sqlite", "postgres", "mysql://x@y/z", "file://a"] {
      #expect(try StoreLocation.parse(argument, environment: Self.environment) == .sqlite(path: argument))
    }
  }

  @Test("a full URL, and postgresql:// the same")
  func fullURL() throws {
    let expected = PostgresURL(user: "app", password: "p@ss:w/rd", host: "db.internal", port: 6543, database: "orders")
    for scheme in ["postgres", "postgresql"] {
      let parsed = try StoreLocation.parse("\(scheme)://app:p%40ss%3Aw%2Frd@db.internal:6543/orders", environment: [:])
      #expect(parsed == .postgres(expected))
    }
    #expect(expected.description == "postgres://app@db.internal:6543/orders")
  }

  @Test("the defaults fill what is left out; PGPASSWORD gives the password the URL lacks")
  func defaults() throws {
    #expect(
      try PostgresURL("postgres://", environment: Self.environment)
        == PostgresURL(user: "shop", password: "from-env", host: "localhost", port: 5432, database: "shop"))
    #expect(
      try PostgresURL("postgres://app@[::1]/orders?sslmode=require", environment: Self.environment)
        == PostgresURL(user: "app", password: "from-env", host: "::1", database: "orders", tls: .require))
    #expect(try PostgresURL("postgres://app:@h/db", environment: Self.environment).password == "")
    #expect(
      try PostgresURL("postgres://app@[::1]:7/d?sslmode=require", environment: [:]).description
        == "postgres://app@[::1]:7/d?sslmode=require")
  }

  @Test("a malformed URL says what is wrong and what would be valid, never quoting the password")
  func problems() {
    let cases = [
      ("postgres://a:secret@h:0/db", "the port is not a number from 1 to 65535; expected postgres://user:password@host:port/dbname"),
      ("postgres://a:secret@h:x/db", "the port is not a number from 1 to 65535; expected postgres://user:password@host:port/dbname"),
      ("postgres://a:secret@[::1/db", "an IPv6 host needs its closing ']'; expected postgres://user:password@host:port/dbname"),
      ("postgres://a:secret@h/db?sslmode=verify-full", #"sslmode must be disable or require, got "verify-full""#),
      ("postgres://a:secret@h/db?timeout=3", #"unknown URL parameter "timeout"; the one parameter understood is sslmode"#),
      ("postgres://a:sec%zzret@h/db", "the password is not valid percent-encoding; expected postgres://user:password@host:port/dbname"),
    ]
    for (argument, message) in cases {
      #expect(throws: PostgresURL.Problem(description: message)) {
        try StoreLocation.parse(argument, environment: [:])
      }
    }
  }

  static let unencoded =
    "the part before the last '@' (user name and password) holds a '/', '?' or '#': percent-encode them there "
    + "(%2F, %3F, %23), and any '@' after the host (%40); expected postgres://user:password@host:port/dbname"

  @Test("a password holding '/', '?', '#', '@', a bad %-escape or ':' never reaches a message")
  func passwordNeverQuoted() {
    let cases = [
      ("postgres://app:se/cr3t@db.internal:6543/orders", Self.unencoded),
      ("postgres://app:se?cr3t@db.internal:6543/orders", Self.unencoded),
      ("postgres://app:se#cr3t@db.internal:6543/orders", Self.unencoded),
      ("postgres://app:se/cr3t@db.internal/orders?sslmode=bogus", Self.unencoded),
      ("postgres://app:s?e/c#r3t@@db.internal:x/orders", Self.unencoded),
      ("postgres://app:se%zzcr3t@db.internal/orders",
       "the password is not valid percent-encoding; expected postgres://user:password@host:port/dbname"),
      ("postgres://app:se@cr3t@db.internal:99999/orders",
       "the port is not a number from 1 to 65535; expected postgres://user:password@host:port/dbname"),
      ("postgres://app:se:cr3t@db.internal/orders?sslmode=bogus", #"sslmode must be disable or require, got "bogus""#),
      // No "@host": what reads as the port is the password.
      ("postgres://app:secr3t/orders", "the port is not a number from 1 to 65535; expected postgres://user:password@host:port/dbname"),
    ]
    for (argument, message) in cases {
      #expect(throws: PostgresURL.Problem(description: message), "\(argument)") {
        try StoreLocation.parse(argument, environment: [:])
      }
    }
  }

  @Test("an unencoded '@' or ':' in the password still reads: the user info ends at the last '@'")
  func unencodedAtAndColon() throws {
    let at = try PostgresURL("postgres://app:se@cr3t@db.internal/orders", environment: [:])
    #expect(at == PostgresURL(user: "app", password: "se@cr3t", host: "db.internal", database: "orders"))
    let colon = try PostgresURL("postgres://app:se:cr3t@db.internal/orders", environment: [:])
    #expect(colon.password == "se:cr3t")
    #expect(at.description == "postgres://app@db.internal:5432/orders")
    #expect(colon.description == "postgres://app@db.internal:5432/orders")
    // An '@' in the database name must be encoded: unencoded, the text before it is user info.
    #expect(throws: PostgresURL.Problem(description: Self.unencoded)) {
      try PostgresURL("postgres://app@db.internal/my@orders", environment: [:])
    }
    #expect(try PostgresURL("postgres://app@db.internal/my%40orders", environment: [:]).database == "my@orders")
  }

  static let libpqEnvironment = [
    "USER": "shop", "PGUSER": "app", "PGPASSWORD": "from-env", "PGHOST": "db.internal", "PGPORT": "6543",
    "PGDATABASE": "orders",
  ]

  @Test("PGUSER, PGHOST, PGPORT and PGDATABASE fill what the URL leaves out, as in libpq; the URL's parts win")
  func libpqVariables() throws {
    let fromEnvironment = PostgresURL(user: "app", password: "from-env", host: "db.internal", port: 6543, database: "orders")
    for argument in ["postgres://", "postgresql:///", "postgres://:/", "postgres://db.internal"] {
      #expect(try PostgresURL(argument, environment: Self.libpqEnvironment) == fromEnvironment, "\(argument)")
    }
    // Every part the URL gives wins over its variable.
    #expect(
      try PostgresURL("postgres://carol:secret@db2.internal:7/shop", environment: Self.libpqEnvironment)
        == PostgresURL(user: "carol", password: "secret", host: "db2.internal", port: 7, database: "shop"))
    // Each part on its own: the others still come from the environment.
    #expect(
      try PostgresURL("postgres://db2.internal/", environment: Self.libpqEnvironment)
        == PostgresURL(user: "app", password: "from-env", host: "db2.internal", port: 6543, database: "orders"))
    #expect(
      try PostgresURL("postgres://:7/shop", environment: Self.libpqEnvironment)
        == PostgresURL(user: "app", password: "from-env", host: "db.internal", port: 7, database: "shop"))
    #expect(
      try PostgresURL("postgres://carol@", environment: Self.libpqEnvironment)
        == PostgresURL(user: "carol", password: "from-env", host: "db.internal", port: 6543, database: "orders"))
    // Without PGDATABASE the database is named after the user, whichever gave it.
    var environment = Self.libpqEnvironment
    environment["PGDATABASE"] = nil
    #expect(try PostgresURL("postgres://carol@h", environment: environment).database == "carol")
    #expect(try PostgresURL("postgres://h", environment: environment).database == "app")
    // An IPv6 address in PGHOST needs no brackets.
    #expect(try PostgresURL("postgres://", environment: ["PGHOST": "::1"]).description == "postgres://postgres@[::1]:5432/postgres")
  }

  @Test("an empty variable counts as unset, as in libpq")
  func emptyVariables() throws {
    let environment = ["USER": "shop", "PGUSER": "", "PGHOST": "", "PGPORT": "", "PGDATABASE": ""]
    #expect(
      try PostgresURL("postgres://", environment: environment)
        == PostgresURL(user: "shop", password: nil, host: "localhost", port: 5432, database: "shop"))
    #expect(try PostgresURL("postgres://", environment: [:]) == PostgresURL(user: "postgres", password: nil, host: "localhost", database: "postgres"))
  }

  @Test("a PGHOST naming a Unix-domain socket or several hosts, and a PGPORT that is not a port, are refused when used")
  func libpqVariableProblems() throws {
    let socket = { (host: String) in
      """
      PGHOST is "\(host)", a Unix-domain socket, and payservice connects over TCP only: \
      give the host in the URL (postgres://user@host/dbname) or a host name in PGHOST
      """
    }
    let cases = [
      (["PGHOST": "/var/run/postgresql"], socket("/var/run/postgresql")),
      (["PGHOST": "@pgsocket"], socket("@pgsocket")),
      (["PGHOST": "db1,db2"], #"PGHOST lists several hosts ("db1,db2"); payservice connects to one: give it in the URL or PGHOST"#),
      (["PGPORT": "x"], #"PGPORT is not a number from 1 to 65535, got "x""#),
      (["PGPORT": "70000"], #"PGPORT is not a number from 1 to 65535, got "70000""#),
      (["PGPORT": "5432,5433"], #"PGPORT is not a number from 1 to 65535, got "5432,5433""#),
    ]
    for (environment, message) in cases {
      #expect(throws: PostgresURL.Problem(description: message), "\(environment)") {
        try PostgresURL("postgres://app@/orders", environment: environment)
      }
    }
    // A variable the URL overrides is not read, so it cannot fail.
    let unusable = ["PGHOST": "/var/run/postgresql", "PGPORT": "x"]
    #expect(
      try PostgresURL("postgres://app@db.internal:5432/orders", environment: unusable)
        == PostgresURL(user: "app", password: nil, host: "db.internal", port: 5432, database: "orders"))
  }
}
