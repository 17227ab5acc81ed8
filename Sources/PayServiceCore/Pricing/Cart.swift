/// One priced cart line.
public struct CartLine: Equatable, Sendable {
  public var sku: String
  public var name: String
  public var quantity: Int
  public var unitPriceMinor: Int64
  public var amountMinor: Int64 { unitPriceMinor * Int64(quantity) }

  /// The summary-item label: the product name, or "Clock × 2".
  public var label: String { quantity > 1 ? "\(name) × \(quantity)" : name }
}

/// A requested cart line, before pricing (what the client asked for and what tokens bind).
public struct CartItem: Equatable, Sendable, JSONRepresentable {
  public var sku: String
  public var quantity: Int

  public func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.member("sku", sku)
    writer.member("quantity", quantity)
    writer.endObject()
  }
}

extension CartItem {
  public static let maxItems = 100
  public static let quantityRange = 1...9999
  static let members = ["sku", "quantity"]

  /// Reads `items`: 1 to 100 entries, each a known sku at most once with quantity 1 to 9999 (default 1).
  static func read(_ value: JSONValue?, _ path: String, reader: ParamReader, config: Config) -> [CartItem]? {
    guard let elements = reader.array(value, path) else { return nil }
    guard (1...maxItems).contains(elements.count) else {
      reader.fail(path, "must hold 1 to \(maxItems) items, got \(elements.count)")
      return nil
    }
    let before = reader.errors.count
    var items: [CartItem] = []
    items.reserveCapacity(elements.count)
    // Which catalog products the cart named already, by catalog position.
    withUnsafeTemporaryAllocation(of: Bool.self, capacity: config.catalog.count) { named in
      named.initialize(repeating: false)
      for (index, element) in elements.enumerated() {
        // Paths are built only when a problem is reported.
        guard let object = reader.object(element, "\(path)[\(index)]") else { continue }
        reader.rejectUnknown(object, "\(path)[\(index)]", allowed: members)
        var sku = reader.string(object["sku"], "\(path)[\(index)].sku")
        if let known = sku {
          if let position = config.catalogPositionBySKU[known] {
            if named[position] {
              reader.fail(
                "\(path)[\(index)].sku",
                "sku \"\(known)\" appears more than once; give it once with the total quantity")
              sku = nil
            }
            named[position] = true
          } else {
            reader.fail("\(path)[\(index)].sku", "unknown sku \"\(known)\"; listProducts shows the catalog")
            sku = nil
          }
        }
        var quantity: Int? = 1
        if let value = object["quantity"] {
          quantity = reader.integer(value, "\(path)[\(index)].quantity", range: quantityRange)
        }
        if let sku, let quantity { items.append(CartItem(sku: sku, quantity: quantity)) }
      }
    }
    return reader.errors.count == before ? items : nil
  }
}
