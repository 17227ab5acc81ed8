/// One entry of the operation journal (table `operation`, migration v9): a piece of work that must
/// happen exactly once, by its kind and key, with the fingerprint of the request that claimed the
/// key and, once settled, the answer every identical request gets again. See `OperationRunner`.
public struct OperationRow: Sendable, Equatable {
  public enum State: String, Sendable, StoredText {
    /// Its network call was (or is being) made and its answer is not recorded yet.
    case pending
    /// Its answer is recorded in `result`.
    case settled

    public static let storedAs = "an operation's state"
  }

  /// The kind of work (`Operation.kind`): "order", "capture", "cancel", "refund".
  public var kind: String
  /// The client's key within the kind: a charge token, a captureId, a cancelId, a refundId.
  public var key: String
  /// The request that claimed the key, as canonical text: another request with the key is refused.
  public var fingerprint: String
  public var state: State
  /// What the work is about (an order id), for the work pending on it; nil when unknown.
  public var subject: String?
  /// What the network step sends and settling records (`Operation.Call`, JSON text); nil for work
  /// decided in one transaction.
  public var request: String?
  /// The answer (JSON text) once settled.
  public var result: String?
  /// When the key was claimed, and when the answer was recorded (RFC 3339).
  public var created: String
  public var settled: String?

  public init(
    kind: String, key: String, fingerprint: String, state: State, subject: String?, request: String?, result: String?,
    created: String, settled: String?
  ) {
    self.kind = kind
    self.key = key
    self.fingerprint = fingerprint
    self.state = state
    self.subject = subject
    self.request = request
    self.result = result
    self.created = created
    self.settled = settled
  }
}

/// Where an entry sorts among the pending ones (`Store.pendingOperations(createdBy:after:limit:)`).
public struct OperationPosition: Sendable, Equatable {
  public var created: String
  public var kind: String
  public var key: String

  public init(created: String, kind: String, key: String) {
    self.created = created
    self.kind = kind
    self.key = key
  }

  public init(_ entry: OperationRow) {
    self.init(created: entry.created, kind: entry.kind, key: entry.key)
  }
}

extension StoreSchema {
  /// Migration v9's table, the same on both backends: the operation journal.
  public static let operationTable = """
    CREATE TABLE operation (
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'settled')),
      subject TEXT,
      request TEXT,
      result TEXT,
      created TEXT NOT NULL,
      settled TEXT,
      PRIMARY KEY (kind, key),
      CHECK ((state = 'settled') = (result IS NOT NULL AND settled IS NOT NULL))
    )
    """

  /// Migration v9's index of the work still pending, by subject: what a decision on an order reads
  /// (`pendingOperations(subject:)`) and the start-up sweep walks.
  public static let pendingOperationIndex =
    "CREATE INDEX operationPendingBySubject ON operation (subject) WHERE state = 'pending'"

  /// Migration v9's move of the back-office keys into the journal, the same on both backends:
  /// each was stored with its answer, so each is settled (when it was stored).
  public static let backOfficeRequestsToOperations = """
    INSERT INTO operation (kind, key, fingerprint, state, subject, request, result, created, settled)
    SELECT kind, key, fingerprint, 'settled', orderId, NULL, result, createdAt, createdAt FROM backOfficeRequest
    """

  /// Migration v9's move of the used charge tokens into the journal as `order` entries, with
  /// `attemptObject` the backend's JSON object of a `paymentAttempt` row `a` (the pending charge's
  /// `ProcessOrder.Charge`): settled when the token kept an answer, else pending with its attempt.
  /// A token used without a fingerprint (none is written so) gets an empty one, which no request matches.
  public static func usedChargeTokensToOperations(attemptObject: String) -> String {
    """
    INSERT INTO operation (kind, key, fingerprint, state, subject, request, result, created, settled)
    SELECT 'order', t.token, COALESCE(t.requestFingerprint, ''),
      CASE WHEN t.result IS NULL THEN 'pending' ELSE 'settled' END,
      COALESCE(a.orderId, o.orderId),
      CASE WHEN a.orderId IS NULL THEN NULL ELSE \(attemptObject) END,
      t.result, t.usedAt, CASE WHEN t.result IS NULL THEN NULL ELSE t.usedAt END
    FROM chargeToken t
    LEFT JOIN paymentAttempt a ON a.token = t.token
    LEFT JOIN charge c ON c.token = t.token
    LEFT JOIN "order" o ON o.chargeId = c.chargeId
    WHERE t.usedAt IS NOT NULL
    """
  }

  /// What migration v9 removes once their rows are in the journal, in this order.
  public static let supersededByOperations = [
    "DROP TABLE backOfficeRequest",
    "DROP TABLE paymentAttempt",
    "ALTER TABLE chargeToken DROP COLUMN requestFingerprint",
    "ALTER TABLE chargeToken DROP COLUMN result",
  ]
}
