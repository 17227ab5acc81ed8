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
  /// Where the stock this transaction takes waits for its commit (`TakenAtCommit`); nil: taken at once.
  var takenAtCommit: TakenAtCommit? = nil

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

  func select(_ statement: StoreStatement, _ values: [StoreValue]) throws -> [StoreRow] {
    try rows(statement.postgres, values).map { row in
      StoreRow(
        try row.map { cell -> StoreValue in
          switch cell.dataType {
          case .int8, .int4, .int2: return .integer(try cell.decode(Int64?.self))
          case .bool: return .bool(try cell.decode(Bool.self))
          default: return .text(try cell.decode(String?.self))
          }
        })
    }
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

/// Stock a transaction takes, kept until just before its commit, so that a sku's row (every order
/// of that sku takes it) is locked from there to the commit rather than from the middle of the
/// transaction: a billing run's payment, or an order that did not read its stock first, takes it
/// that late. Taking stock answers "taken" at once; before the commit each sku's units are taken
/// by the same conditional update, in sku order. When one is short the transaction is rolled back
/// (`Short`) and runs again taking its stock at once, where the shortage is answered as usual.
/// Any other read or write of stock rows takes what waits first, so that it sees it.
final class TakenAtCommit {
  /// The transaction took more of a sku than was on hand when it came to commit.
  struct Short: Error {}

  private var units: [String: Int] = [:]

  func take(_ sku: String, _ quantity: Int) {
    units[sku, default: 0] += quantity
  }

  /// Puts back up to `quantity` units of `sku` still waiting; false when fewer wait (then none is put back).
  func putBack(_ sku: String, _ quantity: Int) -> Bool {
    guard let waiting = units[sku], waiting >= quantity else { return false }
    units[sku] = waiting == quantity ? nil : waiting - quantity
    return true
  }

  /// Takes what waits, in sku order, on `transaction`; throws `Short` when a sku is short.
  func apply(_ transaction: PostgresTransaction) throws {
    let waiting = units
    units = [:]
    for (sku, quantity) in waiting.sorted(by: { $0.key < $1.key }) where quantity > 0 {
      guard try transaction.execute(StoreSQL.decrementStock, [.int(quantity), .text(sku)]) == 1 else { throw Short() }
    }
  }
}
