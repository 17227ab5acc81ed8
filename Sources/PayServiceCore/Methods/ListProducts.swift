/// The catalog with live stock from the store.
public enum ListProducts: RPCMethod {
  public static let name = "listProducts"

  public static let documentation = MethodDocumentation(
    summary: "List the catalog with live stock.",
    description: """
      Lists every product in catalog order: sku (what items[].sku takes), name, description, price and \
      the quantity on hand now. Takes no params and changes nothing.
      """,
    errors: [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true
  public static let params = NoParams.shape

  /// One catalog product with its stock.
  public struct Product: Equatable, Sendable, WireObject {
    public var sku = ""
    public var name = ""
    public var description = ""
    public var price = ""
    public var quantityOnHand = 0
    public var imageURI: String?

    public static let shape = ObjectShape<Product>(
      blank: { Product() },
      [
        .member("sku", \.sku), .member("name", \.name, .required, .string(), read: ParamReader.anyString),
        .member("description", \.description, .required, .string(), read: ParamReader.anyString),
        .member("price", \.price, .required, Shapes.amount),
        .member("quantityOnHand", \.quantityOnHand, .required, .integer(minimum: 0)),
        .member("imageURI", \.imageURI, .optional),
      ])
  }

  public struct Result: MethodResult, WireObject {
    public var products: [Product] = []

    public static let shape = ObjectShape<Result>(blank: { Result() }, [.member("products", \.products)])
  }

  public static func run(_ params: NoParams, context: ServiceContext) throws -> Result {
    let stock = try context.store.stock()
    let config = context.config
    return Result(
      products: config.catalog.map { product in
        Product(
          sku: product.sku, name: product.name, description: product.description,
          price: config.format(product.priceMinor), quantityOnHand: stock[product.sku] ?? product.quantityOnHand,
          imageURI: product.imageURI)
      })
  }
}

/// The params of a method that takes none: any member is an unknown field.
public struct NoParams: Sendable {
  public static let shape = ObjectShape<NoParams>(blank: { NoParams() }, [])
}
