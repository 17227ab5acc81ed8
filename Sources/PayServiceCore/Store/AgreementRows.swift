/// Rows of agreements (migration v12): what a buyer agreed to be charged later, and what happened
/// to each payment, the same on every backend.

/// Where an agreement stands.
public enum AgreementStatus: String, Sendable, WireEnum, CaseIterable {
  /// Payments are made as scheduled (a trial included).
  case active
  /// The last payment was declined; it is retried on `billing.retries`.
  case pastDue = "past_due"
  /// A payment needs the customer (to authenticate, or to give another card): it is not retried
  /// until the merchant's page has them act; `customerAction` says what.
  case actionRequired = "action_required"
  /// Every retry was declined (`billing.whenRetriesFail: unpaid`): no more payments are attempted.
  case unpaid
  /// Ended by `cancelAgreement`, or after its retries (`whenRetriesFail: canceled`).
  case canceled
  /// Every payment the agreement promised was made (an end date reached, a pre-order paid).
  case completed

  /// Whether `runBilling` still collects from it.
  public var collects: Bool { self == .active || self == .pastDue }
}

/// An agreement as the store holds it. `terms` and `credential` are JSON text (`AgreementTerms`,
/// `AgreementCredential`); the rest is what billing runs read and move.
public struct AgreementRow: Sendable, Equatable {
  public var agreementId: String
  /// The checkout order that made the agreement.
  public var orderId: String
  public var kind: BillingPlan.Kind
  public var sku: String
  public var quantity: Int
  public var currencyCode: String
  public var createdAt: String
  public var status: AgreementStatus
  /// When the next payment (or its retry) is due, Unix seconds; nil when none is scheduled.
  public var nextPaymentAt: Int64?
  /// The payment to make next: a subscription's regular period (0 the first after the checkout's),
  /// 0 for a pre-order's payment, the count of reloads for an automatic reload.
  public var period: Int
  /// Declined attempts at `period` so far.
  public var attempt: Int
  /// Cancelled at the end of the current period: the run that would charge the next one ends it.
  public var cancelAtPeriodEnd: Bool
  public var terms: String
  public var credential: String
  /// The sandbox's outcome for later payments (`SandboxOutcome`); nil with a remote gateway.
  public var sandboxOutcome: String?
  /// What the customer must do before payments resume (`action_required`), as JSON text; nil otherwise.
  public var customerAction: String?
  public var updatedAt: String

  /// Whether a billing run up to `until` charges it: it collects, with a payment due by then.
  public func collects(by until: Int64) -> Bool {
    status.collects && (nextPaymentAt.map { $0 <= until } ?? false)
  }

  public init(
    agreementId: String, orderId: String, kind: BillingPlan.Kind, sku: String, quantity: Int, currencyCode: String,
    createdAt: String, status: AgreementStatus, nextPaymentAt: Int64?, period: Int, attempt: Int,
    cancelAtPeriodEnd: Bool, terms: String, credential: String, sandboxOutcome: String?, customerAction: String?,
    updatedAt: String
  ) {
    self.agreementId = agreementId
    self.orderId = orderId
    self.kind = kind
    self.sku = sku
    self.quantity = quantity
    self.currencyCode = currencyCode
    self.createdAt = createdAt
    self.status = status
    self.nextPaymentAt = nextPaymentAt
    self.period = period
    self.attempt = attempt
    self.cancelAtPeriodEnd = cancelAtPeriodEnd
    self.terms = terms
    self.credential = credential
    self.sandboxOutcome = sandboxOutcome
    self.customerAction = customerAction
    self.updatedAt = updatedAt
  }
}

/// One thing that happened to an agreement, in order.
public struct AgreementEventRow: Sendable, Equatable {
  public enum Kind: String, Sendable, WireEnum, CaseIterable {
    /// Made by a checkout (`orderId`).
    case created
    /// A payment went through (`orderId` the payment's order, `amountMinor` what it took).
    case paid
    /// A payment was declined or refused (`code` the failure code, `declineCode` the issuer's).
    case declined
    /// A payment's charge is waiting on the gateway (`processing`, or no answer yet).
    case pending
    /// A payment was not made for the merchant's reason (`out_of_stock`, `not_priced`): nothing
    /// charged, tried again at the next run.
    case skipped
    /// `status` changed (`code` the new status).
    case statusChanged = "status_changed"
    /// `cancelAgreement` with `atPeriodEnd`: it ends at `at`'s period end.
    case cancelScheduled = "cancel_scheduled"
    /// Its Apple Pay merchant token was unlinked (`code`: by whom, as Apple said, or `merchant`), or
    /// Apple described the token's card anew.
    case merchantTokenUnlinked = "merchant_token_unlinked", merchantTokenUpdated = "merchant_token_updated"
  }

  public var agreementId: String
  /// 1, 2, … per agreement.
  public var position: Int
  public var kind: Kind
  public var at: String
  public var period: Int?
  public var attempt: Int?
  public var orderId: String?
  public var amountMinor: Int64?
  public var code: String?
  public var declineCode: String?

  public init(
    agreementId: String, position: Int, kind: Kind, at: String, period: Int? = nil, attempt: Int? = nil,
    orderId: String? = nil, amountMinor: Int64? = nil, code: String? = nil, declineCode: String? = nil
  ) {
    self.agreementId = agreementId
    self.position = position
    self.kind = kind
    self.at = at
    self.period = period
    self.attempt = attempt
    self.orderId = orderId
    self.amountMinor = amountMinor
    self.code = code
    self.declineCode = declineCode
  }
}

/// An agreement with its events and the orders that paid it, read in one snapshot.
public struct StoredAgreement: Sendable, Equatable {
  public var row: AgreementRow
  public var events: [AgreementEventRow]

  public init(row: AgreementRow, events: [AgreementEventRow]) {
    self.row = row
    self.events = events
  }
}

/// Which agreements `listAgreements` reads: by status, then next payment date and id, keyset paged.
public struct AgreementQuery: Sendable, Equatable {
  public var status: AgreementStatus?
  /// Only agreements whose next payment is due at or before this (Unix seconds).
  public var dueBy: Int64?
  /// Only agreements strictly after this one in the listing's order: next payment date (none
  /// last), then agreementId.
  public var after: AgreementCursor?
  public var limit: Int
}

/// A place in the agreements' listing order: by next payment date (those with none last), then id.
public struct AgreementCursor: Sendable, Equatable {
  public var nextPaymentAt: Int64?
  public var agreementId: String

  /// The listing's sort key: an agreement with nothing scheduled sorts after every date.
  public static let noDate: Int64 = Int64.max
}

/// One of `of` parts of the agreements, by the last hex digit of the agreement's id (an HMAC, so
/// the parts are even): billing runs that each take a part never meet on an agreement.
public struct AgreementShard: Sendable, Equatable, WireObject {
  /// Parts at most: one per hex digit.
  public static let maxParts = 16

  public var index = 0
  public var of = 1

  public init(index: Int = 0, of: Int = 1) {
    self.index = index
    self.of = of
  }

  /// Part `index` of `of`; nil unless `of` is 1 to `maxParts` and `index` 0 to `of` - 1.
  public init?(checkedIndex index: Int, of: Int) {
    guard (1...Self.maxParts).contains(of), (0..<of).contains(index) else { return nil }
    self.init(index: index, of: of)
  }

  public static let shape = ObjectShape<AgreementShard>(
    "One of several parts of the agreements, for billing runs at once that share them out.",
    blank: { AgreementShard() },
    [
      .member(
        "index", \.index, .required, .integer("This part, from 0 to of - 1.", minimum: 0, maximum: maxParts - 1),
        read: { value, path, reader in reader.integer(value, path(), range: 0...(maxParts - 1)) }),
      .member(
        "of", \.of, .required, .integer("How many parts, 1 to 16.", minimum: 1, maximum: maxParts),
        read: { value, path, reader in reader.integer(value, path(), range: 1...maxParts) }),
    ])

  /// The last characters of the ids of this part's agreements.
  public var lastDigits: [String] {
    (0..<Self.maxParts).filter { $0 % of == index }.map { String($0, radix: 16) }
  }
}

extension StoreSchema {
  /// Migration v12's statements both backends run as they are: agreements and their events, and
  /// orders that pay an agreement's later payments.
  public static let agreementTables = [
    """
    CREATE TABLE agreement (
      agreementId TEXT PRIMARY KEY NOT NULL,
      orderId TEXT NOT NULL UNIQUE REFERENCES "order"(orderId),
      kind TEXT NOT NULL CHECK (kind IN ('recurring', 'automaticReload', 'deferred')),
      sku TEXT NOT NULL,
      quantity BIGINT NOT NULL CHECK (quantity > 0),
      currencyCode TEXT NOT NULL,
      createdAt TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN (\(AgreementStatus.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")))),
      nextPaymentAt BIGINT,
      period BIGINT NOT NULL CHECK (period >= 0),
      attempt BIGINT NOT NULL CHECK (attempt >= 0),
      cancelAtPeriodEnd BIGINT NOT NULL CHECK (cancelAtPeriodEnd IN (0, 1)),
      terms TEXT NOT NULL,
      credential TEXT NOT NULL,
      sandboxOutcome TEXT,
      customerAction TEXT,
      updatedAt TEXT NOT NULL
    )
    """,
    "CREATE INDEX agreementDue ON agreement (nextPaymentAt, agreementId) WHERE nextPaymentAt IS NOT NULL",
    "CREATE INDEX agreementByStatus ON agreement (status, nextPaymentAt, agreementId)",
    """
    CREATE TABLE agreementEvent (
      agreementId TEXT NOT NULL REFERENCES agreement(agreementId),
      position BIGINT NOT NULL CHECK (position > 0),
      kind TEXT NOT NULL,
      at TEXT NOT NULL,
      period BIGINT,
      attempt BIGINT,
      orderId TEXT,
      amountMinor BIGINT,
      code TEXT,
      declineCode TEXT,
      PRIMARY KEY (agreementId, position)
    )
    """,
    #"ALTER TABLE "order" ADD COLUMN agreementId TEXT"#,
    #"CREATE INDEX orderByAgreement ON "order" (agreementId, createdAt) WHERE agreementId IS NOT NULL"#,
  ]

  /// The sandbox outcome an order's refunds follow (`o` the order, `t` its charge token, left
  /// joined): its token's, or for a later payment of an agreement the agreement's.
  public static let orderSandboxOutcome = """
    COALESCE(t.sandboxOutcome, (SELECT a.sandboxOutcome FROM agreement a WHERE a.agreementId = o.agreementId), 'approved')
    """

  /// The columns an agreement row is read with, in `AgreementRow`'s order.
  public static let agreementColumns = """
    agreementId, orderId, kind, sku, quantity, currencyCode, createdAt, status, nextPaymentAt, period, attempt, \
    cancelAtPeriodEnd, terms, credential, sandboxOutcome, customerAction, updatedAt
    """

  /// The columns an agreement event is read with, in `AgreementEventRow`'s order.
  public static let agreementEventColumns =
    "agreementId, position, kind, at, period, attempt, orderId, amountMinor, code, declineCode"

  /// The listing's order and keyset condition on `a`, with `?`-style placeholders made by
  /// `placeholder` (0-based): agreements with no next payment sort last.
  public static func agreementListing(
    _ query: AgreementQuery, collate: String = "", placeholder: (Int) -> String
  ) -> (sql: String, count: Int) {
    var conditions: [String] = []
    var count = 0
    func next() -> String {
      defer { count += 1 }
      return placeholder(count)
    }
    let sortKey = "COALESCE(nextPaymentAt, \(AgreementCursor.noDate))"
    if query.status != nil { conditions.append("status = \(next())") }
    if query.dueBy != nil { conditions.append("nextPaymentAt <= \(next())") }
    if query.after != nil {
      let (date, date2, id) = (next(), next(), next())
      conditions.append("(\(sortKey) > \(date) OR (\(sortKey) = \(date2) AND agreementId\(collate) > \(id)))")
    }
    let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    return (
      "SELECT \(agreementColumns) FROM agreement \(whereClause) ORDER BY \(sortKey), agreementId\(collate) LIMIT \(next())", count
    )
  }
}
