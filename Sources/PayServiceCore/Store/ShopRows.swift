/// Rows of the stock ledger and of personal-data erasure (migration v10), the same on every backend.

/// A sku's stock as the store holds it.
public struct StockLevel: Sendable, Equatable {
  public var sku: String
  public var quantityOnHand: Int
  /// Units sold and not restocked by a refund or cancel.
  public var sold: Int

  public init(sku: String, quantityOnHand: Int, sold: Int) {
    self.sku = sku
    self.quantityOnHand = quantityOnHand
    self.sold = sold
  }
}

/// One change of stock on hand made by hand (`adjustStock`): goods received, a count corrected.
public struct StockEventRow: Sendable, Equatable {
  public enum Kind: String, Sendable, WireEnum, CaseIterable {
    /// `delta` units added (or, negative, taken off).
    case adjusted
    /// The count set to a number (`delta` is what that changed).
    case set
  }

  public var sku: String
  /// 1, 2, … per sku, in the order they happened.
  public var position: Int
  public var kind: Kind
  public var at: String
  public var delta: Int
  /// On hand after the change.
  public var quantityOnHand: Int
  /// The client's idempotency key.
  public var adjustmentId: String
  public var reason: String

  public init(
    sku: String, position: Int, kind: Kind, at: String, delta: Int, quantityOnHand: Int, adjustmentId: String,
    reason: String
  ) {
    self.sku = sku
    self.position = position
    self.kind = kind
    self.at = at
    self.delta = delta
    self.quantityOnHand = quantityOnHand
    self.adjustmentId = adjustmentId
    self.reason = reason
  }
}

/// Which charge tokens (and so which orders) an erasure of personal data covers.
public enum ErasureSelector: Sendable, Equatable {
  /// Every payment whose shipping or billing contact has this email address (compared without case).
  case emailAddress(String)
  /// The order's payment.
  case orderId(String)
  /// Every payment authorized before this time (RFC 3339 text, compared as text): a retention run.
  case issuedBefore(String)

  /// An email address as erasures compare it: ASCII letters lower-cased, nothing else changed
  /// (what both backends' SQL does to the stored addresses).
  public static func foldedEmail(_ address: String) -> String {
    String(decoding: address.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
  }
}

/// What a charge token and its order hold of a buyer, read locked for an erasure.
public struct PersonalDataRow: Sendable {
  public var token: String
  /// The token's `OrderBinding` as JSON text (the shipping contact among it).
  public var binding: String
  /// The billing contact as JSON text, if any.
  public var billingContact: String?
  /// The order the token paid for, with its document; nil when none was recorded.
  public var orderId: String?
  public var orderDocument: String?

  public init(token: String, binding: String, billingContact: String?, orderId: String?, orderDocument: String?) {
    self.token = token
    self.binding = binding
    self.billingContact = billingContact
    self.orderId = orderId
    self.orderDocument = orderDocument
  }
}

extension StoreSchema {
  /// Migration v10, the same SQL on both backends: stock changes made by hand, and when a payment's
  /// personal data was erased (on its token and on its order).
  public static let shopMigration = [
    """
    CREATE TABLE stockEvent (
      sku TEXT NOT NULL,
      position BIGINT NOT NULL CHECK (position > 0),
      kind TEXT NOT NULL CHECK (kind IN ('adjusted', 'set')),
      at TEXT NOT NULL,
      delta BIGINT NOT NULL,
      quantityOnHand BIGINT NOT NULL CHECK (quantityOnHand >= 0),
      adjustmentId TEXT NOT NULL,
      reason TEXT NOT NULL,
      PRIMARY KEY (sku, position)
    )
    """,
    "ALTER TABLE chargeToken ADD COLUMN erasedAt TEXT",
    #"ALTER TABLE "order" ADD COLUMN erasedAt TEXT"#,
    "CREATE INDEX chargeTokenNotErasedByIssue ON chargeToken (issuedAt) WHERE erasedAt IS NULL",
  ]
}
