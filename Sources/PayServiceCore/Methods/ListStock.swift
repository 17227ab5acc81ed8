/// The store's stock of every product, configured now or before, beside the config's seed count.
/// Back office only (`--back-office`).
public enum ListStock: RPCMethod {
  public static let name = "listStock"

  public static let documentation = MethodDocumentation(
    summary: "List the stock on hand and sold of every product the store has held, with the changes made by hand.",
    description: """
      One entry per sku the store has stock of: the config's products in catalog order, then those taken out \
      of the config (inCatalog false: they no longer sell, and keep their stock and history). Each has \
      quantityOnHand and sold (units sold and not given back by refunds or cancels) as the store holds them, \
      and configuredQuantity, the config's quantityOnHand, which only seeds a product's stock the first time \
      the store sees it. With sku, only that product, with its stock changes made by hand (adjustStock), \
      newest first (at most 100). Changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  /// The most stock events listed for one sku.
  public static let maxAdjustments = 100

  public struct Params: Sendable {
    public var sku: String?
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [.member("sku", \.sku, .optional, .string("Only this product, with its stock changes.", minLength: 1))])

  /// A stock change made by hand.
  public struct Adjustment: Equatable, Sendable, WireObject {
    public var adjustmentId = ""
    public var type = StockEventRow.Kind.adjusted
    public var at = ""
    public var delta = 0
    public var quantityOnHand = 0
    public var reason = ""

    public static let shape = ObjectShape<Adjustment>(
      blank: { Adjustment() },
      [
        .member("adjustmentId", \.adjustmentId), .member("type", \.type),
        .member("at", \.at, .required, Shapes.timestamp),
        .member("delta", \.delta, .required, .integer("Units added (negative: taken off).")),
        .member("quantityOnHand", \.quantityOnHand, .required, .integer("On hand after.", minimum: 0)),
        .member("reason", \.reason, .required, .string(), read: ParamReader.anyString),
      ])
  }

  public struct Item: Equatable, Sendable, WireObject {
    public var sku = ""
    public var name: String?
    public var inCatalog = true
    public var configuredQuantity: Int?
    public var quantityOnHand = 0
    public var sold = 0
    public var adjustments: [Adjustment]?

    public static let shape = ObjectShape<Item>(
      blank: { Item() },
      [
        .member("sku", \.sku),
        .member("name", \.name, .optional, .string("The config's name; absent once out of the config."), read: ParamReader.anyString),
        .member("inCatalog", \.inCatalog, .required, .boolean("Whether the config sells it now.")),
        .member(
          "configuredQuantity", \.configuredQuantity, .optional,
          .integer("The config's quantityOnHand: the seed count, used once.", minimum: 0)),
        .member("quantityOnHand", \.quantityOnHand, .required, .integer(minimum: 0)),
        .member("sold", \.sold, .required, .integer("Units sold and not refunded or canceled.", minimum: 0)),
        .member(
          "adjustments", \.adjustments, .optional,
          .array(Adjustment.schema, "With sku: the changes made by hand, newest first.")),
      ])
  }

  public struct Result: MethodResult, WireObject {
    public var stock: [Item] = []

    public static let shape = ObjectShape<Result>(
      blank: { Result() }, [.member("stock", \.stock, .required, .array(Item.schema, "Catalog order, then the rest by sku."))])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let store = try context.store
    let config = context.config
    var levels = try store.stockLevels()
    if let sku = params.sku { levels = levels.filter { $0.sku == sku } }
    let ordered = levels.sorted { left, right in
      switch (config.catalogPositionBySKU[left.sku], config.catalogPositionBySKU[right.sku]) {
      case (let l?, let r?): return l < r
      case (.some, nil): return true
      case (nil, .some): return false
      case (nil, nil): return left.sku.utf8.lexicographicallyPrecedes(right.sku.utf8)
      }
    }
    return Result(
      stock: try ordered.map { level throws(StoreError) in
        let product = config.productsBySKU[level.sku]
        var item = Item(
          sku: level.sku, name: product?.name, inCatalog: product != nil, configuredQuantity: product?.quantityOnHand,
          quantityOnHand: level.quantityOnHand, sold: level.sold)
        if params.sku != nil {
          item.adjustments = try store.stockEvents(sku: level.sku, limit: maxAdjustments).map {
            Adjustment(
              adjustmentId: $0.adjustmentId, type: $0.kind, at: $0.at, delta: $0.delta, quantityOnHand: $0.quantityOnHand,
              reason: $0.reason)
          }
        }
        return item
      })
  }
}
