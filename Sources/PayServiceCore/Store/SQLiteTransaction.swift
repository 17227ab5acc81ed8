import GRDB

/// The store's statements on SQLite, inside a transaction `SQLiteStore` opened: every book of
/// `StoreTransaction`, one file per concern (`SQLiteTransaction+…`), with the statements both
/// backends share (`StoreSQL`). The write lock is the whole store's and is held from the
/// transaction's start, so reads need no row locks.
struct SQLiteTransaction: StoreTransaction, StatementRunner {
  let db: Database

  /// Runs `statement` with `values`; how many rows it changed.
  @discardableResult
  func execute(_ statement: StoreStatement, _ values: [StoreValue] = []) throws -> Int {
    try db.cachedStatement(sql: statement.sqlite).execute(arguments: Self.arguments(values))
    return db.changesCount
  }

  func select(_ statement: StoreStatement, _ values: [StoreValue]) throws -> [StoreRow] {
    try Row.fetchAll(db.cachedStatement(sql: statement.sqlite), arguments: Self.arguments(values)).map { row in
      StoreRow(
        row.databaseValues.map { value -> StoreValue in
          switch value.storage {
          case .int64(let number): return .integer(number)
          case .string(let text): return .text(text)
          case .double(let number): return .text(String(number))
          case .null, .blob: return .text(nil)
          }
        })
    }
  }

  /// The first row `statement` selects, as `read` makes it; nil when none.
  func one<T>(_ statement: StoreStatement, _ values: [StoreValue], _ read: (Row) throws -> T) throws -> T? {
    try Row.fetchOne(db.cachedStatement(sql: statement.sqlite), arguments: Self.arguments(values)).map(read)
  }

  /// Every row `statement` selects, as `read` makes them.
  func all<T>(_ statement: StoreStatement, _ values: [StoreValue], _ read: (Row) throws -> T) throws -> [T] {
    try Row.fetchAll(db.cachedStatement(sql: statement.sqlite), arguments: Self.arguments(values)).map(read)
  }

  static func arguments(_ values: [StoreValue]) -> StatementArguments {
    StatementArguments(
      values.map { value -> (any DatabaseValueConvertible)? in
        switch value {
        case .text(let text): return text
        case .integer(let number): return number
        case .bool(let flag): return flag
        }
      })
  }
}
