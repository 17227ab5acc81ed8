import Foundation

/// A PostgreSQL server as `--database` names it: `postgres://user:password@host:port/dbname`
/// (or `postgresql://`). What the URL leaves out comes from `PGUSER`, `PGPASSWORD`, `PGHOST`,
/// `PGPORT` and `PGDATABASE` as in libpq. `description` never includes the password.
public struct PostgresURL: Equatable, Sendable, CustomStringConvertible {
  public enum TLSMode: String, Sendable {
    /// Plain TCP (the default; fine on loopback and private networks).
    case disable
    /// TLS, with the server's certificate and host name verified against the system's trust roots.
    case require
  }

  /// Why an argument is not a usable PostgreSQL URL (never quoting the password).
  public struct Problem: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
  }

  public var user: String
  public var password: String?
  public var host: String
  public var port: Int
  public var database: String
  public var tls: TLSMode

  public static func isPostgres(_ argument: String) -> Bool {
    argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://")
  }

  public init(
    user: String, password: String?, host: String, port: Int = 5432, database: String, tls: TLSMode = .disable
  ) {
    self.user = user
    self.password = password
    self.host = host
    self.port = port
    self.database = database
    self.tls = tls
  }

  /// Parses `argument`. A part the URL leaves out (or gives empty) comes from the environment as in
  /// libpq: the user from `PGUSER`, else `USER`, else `postgres`; the password from `PGPASSWORD`;
  /// the host from `PGHOST`, else `localhost`; the port from `PGPORT`, else 5432; the database from
  /// `PGDATABASE`, else the user's name. An empty variable counts as unset. Two things libpq
  /// takes from them are refused rather than misread: a `PGHOST` that names a Unix-domain socket
  /// (it starts with `/` or `@`), and a `PGHOST` or `PGPORT` listing several servers. libpq's own
  /// default host is a Unix-domain socket; payservice connects over TCP only, so it is `localhost`
  /// here. The one query parameter understood is `sslmode` (`disable` or `require`).
  ///
  /// The user info (user name and password) is everything before the last `@`: no host, port,
  /// database name or parameter holds one, so a password with an unencoded `@` still splits
  /// right. It is split off before anything else is read, and no message quotes any of it. A
  /// `/`, `?` or `#` in it is refused: a URL must percent-encode them, and reading on would
  /// misplace the password into the host, port or parameters.
  public init(_ argument: String, environment: [String: String]) throws(Problem) {
    let shape = "expected postgres://user:password@host:port/dbname"
    guard let schemeEnd = argument.range(of: "://") else { throw Problem(description: shape) }
    var rest = Substring(argument[schemeEnd.upperBound...])
    var userInfo: Substring?
    if let at = rest.lastIndex(of: "@") {
      userInfo = rest[..<at]
      rest = rest[rest.index(after: at)...]
    }
    if let userInfo, userInfo.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
      throw Problem(
        description: """
          the part before the last '@' (user name and password) holds a '/', '?' or '#': percent-encode them \
          there (%2F, %3F, %23), and any '@' after the host (%40); \(shape)
          """)
    }
    var query: Substring = ""
    if let mark = rest.firstIndex(of: "?") {
      query = rest[rest.index(after: mark)...]
      rest = rest[..<mark]
    }
    var path: Substring = ""
    if let slash = rest.firstIndex(of: "/") {
      path = rest[rest.index(after: slash)...]
      rest = rest[..<slash]
    }
    // libpq takes an empty variable as unset.
    func variable(_ name: String) -> String? {
      guard let value = environment[name], !value.isEmpty else { return nil }
      return value
    }
    var user = variable("PGUSER") ?? variable("USER") ?? "postgres"
    var password = environment["PGPASSWORD"]
    if let userInfo {
      let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = Self.decode(parts[0]), !name.isEmpty || parts.count == 2 else {
        throw Problem(description: "the user name is not valid percent-encoding; \(shape)")
      }
      if !name.isEmpty { user = name }
      if parts.count == 2 {
        guard let secret = Self.decode(parts[1]) else {
          throw Problem(description: "the password is not valid percent-encoding; \(shape)")
        }
        password = secret
      }
    }
    // The host: a name, an IPv4 address, or an IPv6 address in brackets; then an optional port.
    var host: String?
    var portText: Substring?
    if rest.hasPrefix("[") {
      guard let close = rest.firstIndex(of: "]") else {
        throw Problem(description: "an IPv6 host needs its closing ']'; \(shape)")
      }
      host = String(rest[rest.index(after: rest.startIndex)..<close])
      let after = rest[rest.index(after: close)...]
      if !after.isEmpty {
        guard after.hasPrefix(":") else { throw Problem(description: "unexpected text after the host; \(shape)") }
        portText = after.dropFirst()
      }
    } else {
      let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      if !parts[0].isEmpty { host = String(parts[0]) }
      if parts.count == 2 { portText = parts[1] }
    }
    if host == nil, let fromEnvironment = variable("PGHOST") {
      if fromEnvironment.hasPrefix("/") || fromEnvironment.hasPrefix("@") {
        throw Problem(
          description: """
            PGHOST is "\(fromEnvironment)", a Unix-domain socket, and payservice connects over TCP only: \
            give the host in the URL (postgres://user@host/dbname) or a host name in PGHOST
            """)
      }
      if fromEnvironment.contains(",") {
        throw Problem(
          description: "PGHOST lists several hosts (\"\(fromEnvironment)\"); payservice connects to one: give it in the URL or PGHOST")
      }
      host = fromEnvironment
    }
    var port = 5432
    if let portText, !portText.isEmpty {
      // Not quoted: in a URL that lacks its "@host", the port is where the password went.
      guard let number = Int(portText), (1...65535).contains(number) else {
        throw Problem(description: "the port is not a number from 1 to 65535; \(shape)")
      }
      port = number
    } else if let fromEnvironment = variable("PGPORT") {
      guard let number = Int(fromEnvironment), (1...65535).contains(number) else {
        throw Problem(description: "PGPORT is not a number from 1 to 65535, got \"\(fromEnvironment)\"")
      }
      port = number
    }
    var database = variable("PGDATABASE") ?? user
    if !path.isEmpty {
      guard let name = Self.decode(path), !name.contains("/") else {
        throw Problem(description: "the database name is not valid; \(shape)")
      }
      database = name
    }
    var tls = TLSMode.disable
    for parameter in query.split(separator: "&") {
      let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard pair.count == 2, pair[0] == "sslmode" else {
        throw Problem(description: "unknown URL parameter \"\(pair[0])\"; the one parameter understood is sslmode")
      }
      guard let mode = TLSMode(rawValue: String(pair[1])) else {
        throw Problem(description: "sslmode must be disable or require, got \"\(pair[1])\"")
      }
      tls = mode
    }
    self.init(user: user, password: password, host: host ?? "localhost", port: port, database: database, tls: tls)
  }

  private static func decode(_ text: Substring) -> String? {
    String(text).removingPercentEncoding
  }

  /// The URL without its password, for messages and logs.
  public var description: String {
    let hostText = host.contains(":") ? "[\(host)]" : host
    let user = user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? user
    let database = database.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? database
    let query = tls == .disable ? "" : "?sslmode=\(tls.rawValue)"
    return "postgres://\(user)@\(hostText):\(port)/\(database)\(query)"
  }
}
