/// The catalog with live stock from the store.
public enum ListProducts: RPCMethod {
  public static let name = "listProducts"

  public static let documentation = MethodDescription(
    summary: "List the catalog with live stock.",
    description: """
      Lists every product in catalog order: sku (what items[].sku takes), name, description, price and \
      the quantity on hand now. Takes no params and changes nothing.
      """,
    params: [],
    result: .object(
      [
        (
          "products",
          .array(
            .object(
              [
                ("sku", .string()), ("name", .string()), ("description", .string()), ("price", Shapes.amount),
                ("quantityOnHand", .integer(minimum: 0)), ("imageURI", .string()),
              ], required: ["sku", "name", "description", "price", "quantityOnHand"]))
        )
      ], required: ["products"]),
    errors: MethodDescription.paramErrors + [.storeUnavailable], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Output: JSONRepresentable {
    public var value: JSONValue

    public func write(to writer: inout JSONWriter) {
      writer.write(value)
    }
  }

  public static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Void? {
    reader.rejectUnknown(params, "", allowed: [])
    return ()
  }

  public static func run(_ params: Void, context: ServiceContext) throws -> Output {
    let stock = try context.store.stock()
    let config = context.config
    let products: [JSONValue] = config.catalog.map { product in
      var object = JSONObjectBuilder()
      object.set("sku", product.sku)
      object.set("name", product.name)
      object.set("description", product.description)
      object.set("price", config.format(product.priceMinor))
      object.set("quantityOnHand", stock[product.sku] ?? product.quantityOnHand)
      object.set("imageURI", product.imageURI)
      return object.value
    }
    var result = JSONObjectBuilder()
    result.set("products", .array(products))
    return Output(value: result.value)
  }
}
