/// One statement's SQL, written once for both backends, as each takes it. The text has `?` for
/// each value in order (`?N` for the Nth value where one is used twice): SQLite takes it as it is,
/// PostgreSQL with `$1`, `$2`… instead. Where the dialects differ only in how text sorts, the text
/// is made for each (`Dialect`); where they differ more, each backend writes its own.
public struct StoreStatement: Sendable {
  public let sqlite: String
  public let postgres: String

  /// The same text on both backends.
  public init(_ text: String) {
    sqlite = text
    postgres = Self.numbered(text)
  }

  /// A text made for each backend's dialect.
  public init(_ text: (Dialect) -> String) {
    sqlite = Dialect.sqlite.placing(text(.sqlite))
    postgres = Dialect.postgres.placing(text(.postgres))
  }

  /// What the backends write differently in a statement otherwise the same.
  public struct Dialect: Sendable {
    /// After a text column compared or sorted: byte-wise on both (SQLite's default; PostgreSQL's
    /// `"C"`, whatever the database's collation).
    public let collate: String
    let numbersPlaceholders: Bool

    public static let sqlite = Dialect(collate: "", numbersPlaceholders: false)
    public static let postgres = Dialect(collate: #" COLLATE "C""#, numbersPlaceholders: true)

    /// `text`, written with `?` placeholders, as this backend takes it.
    public func placing(_ text: String) -> String {
      numbersPlaceholders ? StoreStatement.numbered(text) : text
    }
  }

  /// `text` with PostgreSQL's placeholders: each `?` is the next `$N`, each `?N` is `$N`.
  static func numbered(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count + 16)
    var next = 1
    var index = text.startIndex
    while index < text.endIndex {
      let character = text[index]
      index = text.index(after: index)
      guard character == "?" else {
        result.append(character)
        continue
      }
      var digits = ""
      while index < text.endIndex, let digit = text[index].wholeNumberValue, digit < 10 {
        digits.append(text[index])
        index = text.index(after: index)
      }
      if digits.isEmpty {
        digits = String(next)
        next += 1
      }
      result += "$" + digits
    }
    return result
  }

  /// `count` placeholders, comma-separated: an insert's values.
  public static func placeholders(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
  }
}

/// A value bound to a `StoreStatement`, as both backends bind it: text, a 64-bit integer (either
/// may be NULL) or a boolean.
public enum StoreValue: Sendable, Equatable {
  case text(String?)
  case integer(Int64?)
  case bool(Bool)

  public static func int(_ value: Int?) -> StoreValue { .integer(value.map(Int64.init)) }
}

/// A backend's transaction as the books it keeps the same way as the other backend see it: it
/// runs a `StoreStatement`. The writes both backends make alike are written once on it, beside
/// their statements (`StoreSQL`); a backend writes its own only where its SQL differs, and its
/// reads (each driver reads rows its own way).
public protocol StatementRunner {
  /// Runs `statement` with `values`; how many rows it changed.
  @discardableResult func execute(_ statement: StoreStatement, _ values: [StoreValue]) throws -> Int
  /// Runs `statement` with `values`: the rows it selects, each column as text, a 64-bit integer
  /// or a boolean (NULL as `.text(nil)`), so that a book's reads are written once too.
  func select(_ statement: StoreStatement, _ values: [StoreValue]) throws -> [StoreRow]
}

/// A row `StatementRunner.select` read: its columns in the statement's order.
public struct StoreRow: Sendable, Equatable {
  public var columns: [StoreValue]

  public init(_ columns: [StoreValue]) {
    self.columns = columns
  }

  /// Column `index` as text; NULL or another type is a store failure.
  public func text(_ index: Int) throws(StoreError) -> String {
    guard let text = optionalText(index) else { throw Self.failure(index, "text") }
    return text
  }

  /// Column `index` as text; nil when NULL.
  public func optionalText(_ index: Int) -> String? {
    guard index < columns.count, case .text(let text) = columns[index] else { return nil }
    return text
  }

  /// Column `index` as an integer; NULL or another type is a store failure.
  public func integer(_ index: Int) throws(StoreError) -> Int64 {
    guard let number = optionalInteger(index) else { throw Self.failure(index, "an integer") }
    return number
  }

  /// Column `index` as an integer; nil when NULL.
  public func optionalInteger(_ index: Int) -> Int64? {
    guard index < columns.count, case .integer(let number) = columns[index] else { return nil }
    return number
  }

  static func failure(_ index: Int, _ type: String) -> StoreError {
    .unavailable(reason: "column \(index + 1) of a row read is not \(type)")
  }
}

extension StatementRunner {
  /// Runs `statement`, which must change exactly one row; else the store failed, for `reason`.
  public func executeOne(
    _ statement: StoreStatement, _ values: [StoreValue], orFail reason: @autoclosure () -> String
  ) throws {
    guard try execute(statement, values) == 1 else { throw StoreError.unavailable(reason: reason()) }
  }
}
