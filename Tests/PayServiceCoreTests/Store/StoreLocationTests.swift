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

  @Test("libpq's defaults fill what is left out; PGPASSWORD gives the password the URL lacks")
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
      ("postgres://a:secret@h:0/db", #"the port "0" is not a number from 1 to 65535; expected postgres://user:password@host:port/dbname"#),
      ("postgres://a:secret@h:x/db", #"the port "x" is not a number from 1 to 65535; expected postgres://user:password@host:port/dbname"#),
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
}
