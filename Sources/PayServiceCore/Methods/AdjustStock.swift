/// Goods received, a count corrected: changes a sku's stock on hand by hand, exactly once per
/// adjustmentId. Back office only (`--back-office`).
public enum AdjustStock: OperationMethod {
  public static let name = "adjustStock"

  public static let documentation = MethodDocumentation(
    summary: "Change a sku's stock on hand: goods received or sent back (delta), or a count corrected (set).",
    description: """
      Adds delta units to the stock on hand of sku (a negative delta takes units off), or sets it to set \
      units: exactly one of the two. Stock never goes below zero: a change that would is failed with \
      insufficient_stock, and nothing changes. Each change is recorded as a stock event with its reason \
      (listStock shows them). adjustmentId is the client's idempotency key: the same adjustmentId with the same \
      params returns the stored result and changes nothing more; with other params it is error -32004. A \
      failure leaves the adjustmentId unused. A sku the store has no stock of (never in the config) is failed \
      with unknown_sku; a product taken out of the config keeps its stock and history and can still be adjusted.
      """,
    errors: [.storeUnavailable, .idempotencyKeyConflict], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// The most units of one sku the store holds.
  public static let maxQuantity = 1_000_000_000

  public struct Params: Sendable {
    public var adjustmentId = ""
    public var sku = ""
    public var delta: Int?
    public var set: Int?
    public var reason = ""
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "adjustmentId", \.adjustmentId, .required,
        BackOffice.keySchema("Your idempotency key for this change: 1 to 255 printable ASCII characters."),
        read: BackOffice.readKey),
      .member("sku", \.sku, .required, .string("The product, as in the config (or once in it).", minLength: 1)),
      .member(
        "delta", \.delta, .optional,
        .integer("Units to add (negative: to take off); not 0.", minimum: -maxQuantity, maximum: maxQuantity),
        read: { value, path, reader in
          guard let delta = reader.integer(value, path(), range: -maxQuantity...maxQuantity) else { return nil }
          guard delta != 0 else {
            reader.fail(path(), "must not be 0; to record a count, send set")
            return nil
          }
          return delta
        }),
      .member(
        "set", \.set, .optional, .integer("The stock on hand counted.", minimum: 0, maximum: maxQuantity),
        read: { value, path, reader in reader.integer(value, path(), range: 0...maxQuantity) }),
      .member(
        "reason", \.reason, .required,
        .string("Why, for the stock's history: \"received PO-1042\", \"stocktake\".", minLength: 1, maxLength: 200),
        read: { value, path, reader in
          guard let reason = reader.string(value, path()) else { return nil }
          guard reason.count <= 200 else {
            reader.fail(path(), "must be at most 200 characters, got \(reason.count)")
            return nil
          }
          return reason
        }),
    ],
    check: { params, reader in
      if (params.delta == nil) == (params.set == nil) {
        reader.fail("", "give exactly one of delta (units to add or take off) and set (the count)")
      }
    })

  /// A change made.
  public struct Succeeded: Equatable, Sendable, WireObject {
    public var adjustmentId = ""
    public var sku = ""
    public var delta = 0
    public var quantityBefore = 0
    public var quantityOnHand = 0
    public var at = ""

    public static let shape = ObjectShape<Succeeded>(
      blank: { Succeeded() },
      [
        .constant("status", "succeeded"), .member("adjustmentId", \.adjustmentId), .member("sku", \.sku),
        .member("delta", \.delta, .required, .integer("What the change added (negative: took off).")),
        .member("quantityBefore", \.quantityBefore, .required, .integer("On hand before.", minimum: 0)),
        .member("quantityOnHand", \.quantityOnHand, .required, .integer("On hand after.", minimum: 0)),
        .member("at", \.at, .required, Shapes.timestamp),
      ])
  }

  public typealias Result = BackOffice.Result<Succeeded>

  public static func operation(_ params: Params, context: ServiceContext) -> Adjustment {
    Adjustment(params: params, fingerprint: BackOffice.fingerprint(params, Self.params))
  }

  /// adjustStock as an operation of the journal (kind `stock`, keyed by the adjustmentId), done in
  /// one transaction with the sku's stock row locked.
  public struct Adjustment: LocalOperation {
    public static let kind = "stock"

    let params: Params
    public let fingerprint: String
    public var key: String { params.adjustmentId }
    public var subject: String? { params.sku }
    public var conflict: ServiceError { .idempotencyKeyConflict("adjustmentId") }

    public static func lock(
      key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext
    ) throws -> StockLevel? {
      try subject.flatMap { try transaction.stockLevel($0) }
    }

    public func prepare(
      _ level: StockLevel?, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64
    ) throws -> Preparation<Result, NoCall> {
      let sku = params.sku
      guard let level else {
        let known = context.config.catalog.map(\.sku).joined(separator: ", ")
        return .done(
          .failed(.unknownSku, "The store has no stock of \(sku); the config's products are \(known)."), final: false)
      }
      let target = params.set ?? level.quantityOnHand + (params.delta ?? 0)
      guard target >= 0 else {
        return .done(
          .failed(
            .insufficientStock,
            "\(sku) has \(level.quantityOnHand) on hand; at most \(level.quantityOnHand) can be taken off."),
          final: false)
      }
      guard target <= AdjustStock.maxQuantity else {
        return .done(
          .failed(
            .insufficientStock,
            "\(sku) would have \(target) on hand; the store holds at most \(AdjustStock.maxQuantity) of a sku."),
          final: false)
      }
      let at = RFC3339.format(now)
      try transaction.setQuantityOnHand(sku, to: target)
      try transaction.insert(
        StockEventRow(
          sku: sku, position: try transaction.nextStockEventPosition(sku), kind: params.set == nil ? .adjusted : .set,
          at: at, delta: target - level.quantityOnHand, quantityOnHand: target, adjustmentId: params.adjustmentId,
          reason: params.reason))
      return .done(
        .succeeded(
          Succeeded(
            adjustmentId: params.adjustmentId, sku: sku, delta: target - level.quantityOnHand,
            quantityBefore: level.quantityOnHand, quantityOnHand: target, at: at)), final: true)
    }
  }
}
