import PayServiceCore
import PostgresNIO

/// The store's statements on PostgreSQL, inside a transaction `PostgresStore` opened: every book
/// of `StoreTransaction`, one file per concern (`PostgresTransaction+…`), with the statements
/// both backends share (`StoreSQL`). Unlike SQLite, other transactions run alongside, so the rows
/// a decision rests on are locked first.
struct PostgresTransaction: StoreTransaction, StatementRunner {
  let session: PostgresSession
  /// Where the tokens and authorizations this transaction inserts are noted, for the store's
  /// `IssuedTokens` once it commits; nil: not noted.
  var issued: IssuedRows? = nil

  static func bindings(_ values: [StoreValue]) -> PostgresBindings {
    var binds = PostgresBindings(capacity: values.count)
    for value in values {
      switch value {
      case .text(let text): binds.append(text)
      case .integer(let number): binds.append(number)
      case .bool(let flag): binds.append(flag)
      }
    }
    return binds
  }

  /// Runs `sql` with `values`: its rows.
  func rows(_ sql: String, _ values: [StoreValue] = []) throws -> [PostgresRow] {
    try session.run(sql, Self.bindings(values)).rows
  }

  /// Runs `statement` with `values`; how many rows it changed.
  @discardableResult
  func execute(_ statement: StoreStatement, _ values: [StoreValue] = []) throws -> Int {
    try session.changes(statement.postgres, Self.bindings(values))
  }

  /// The first row `sql` selects, as `read` makes it; nil when none.
  func one<T>(_ sql: String, _ values: [StoreValue], _ read: (PostgresRow) throws -> T) throws -> T? {
    try rows(sql, values).first.map(read)
  }

  /// Every row `sql` selects, as `read` makes them.
  func all<T>(_ sql: String, _ values: [StoreValue], _ read: (PostgresRow) throws -> T) throws -> [T] {
    try rows(sql, values).map(read)
  }
}
