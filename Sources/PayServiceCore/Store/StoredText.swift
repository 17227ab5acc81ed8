/// A value stored as its raw text (a status or kind column). Read back, a text it does not know
/// is a store failure naming the column, never a guess.
public protocol StoredText: RawRepresentable<String> {
  /// What the column holds, for that failure: "an order's status".
  static var storedAs: String { get }
}

extension StoredText {
  public init(stored: String) throws(StoreError) {
    guard let value = Self(rawValue: stored) else {
      throw StoreError.unavailable(reason: "\(Self.storedAs) \"\(stored)\" is unknown")
    }
    self = value
  }
}
