/// One priced cart line.
public struct CartLine: Equatable, Sendable {
  public var sku: String
  public var name: String
  public var quantity: Int
  public var unitPriceMinor: Int64
  /// The product's tax class (which of a rule's rates applies).
  public var taxClass = TaxClass.standard
  /// The product's billing plan: `unitPriceMinor` is then what one unit costs today.
  public var billing: BillingPlan?
  public var amountMinor: Int64 { unitPriceMinor * Int64(quantity) }

  /// The summary-item label: the product name, or "Clock × 2".
  public var label: String { quantity > 1 ? "\(name) × \(quantity)" : name }
}

/// A requested cart line, before pricing (what the client asked for and what tokens bind).
public struct CartItem: Equatable, Sendable, WireObject {
  public var sku: String
  public var quantity: Int

  public static let maxItems = 100
  public static let quantityRange = 1...9999

  public static let shape = ObjectShape<CartItem>(
    blank: { CartItem(sku: "", quantity: 1) },
    [
      .member(
        "sku", \.sku, .required, .string("A catalog sku (listProducts lists them), at most once per cart.", minLength: 1),
        read: { value, path, reader in
          guard let sku = reader.string(value, path()) else { return nil }
          if let context = reader.context, context.config.catalogPositionBySKU[sku] == nil {
            reader.fail(path(), "unknown sku \"\(sku)\"; listProducts shows the catalog")
            return nil
          }
          return sku
        }),
      .member(
        "quantity", \.quantity, .optional,
        .integer("How many; default 1.", minimum: quantityRange.lowerBound, maximum: quantityRange.upperBound),
        read: { value, path, reader in reader.integer(value, path(), range: quantityRange) }),
    ])

  /// A cart: 1 to 100 items, each sku at most once.
  public static let cartSchema = JSONSchema.array(
    schema, "The cart: one entry per sku.", minItems: 1, maxItems: CartItem.maxItems)

  /// Reads a cart: 1 to 100 entries, each a known sku at most once with quantity 1 to 9999 (default 1).
  public static let readCart: MemberReader<[CartItem]> = { value, path, reader in
    guard case .array(let elements) = value else {
      reader.fail(path(), "must be an array, got \(value.kindName)")
      return nil
    }
    guard (1...maxItems).contains(elements.count) else {
      reader.fail(path(), "must hold 1 to \(maxItems) items, got \(elements.count)")
      return nil
    }
    let before = reader.errors.count
    var items: [CartItem] = []
    items.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      // Paths are built only when a problem is reported.
      func itemPath() -> String { "\(path())[\(index)]" }
      guard let item = shape.read(element, at: itemPath, reader: reader) else { continue }
      // A repeat of any earlier entry's sku, also one that did not read (its quantity was wrong):
      // the client gets both problems at once. The entries are looked at again only after a problem.
      let repeated =
        items.contains { $0.sku == item.sku }
        || (reader.errors.count > before
          && elements[..<index].contains { earlier in
            if case .object(let object) = earlier, case .string(let sku)? = object["sku"] { return sku == item.sku }
            return false
          })
      if repeated {
        reader.fail(
          "\(itemPath()).sku", "sku \"\(item.sku)\" appears more than once; give it once with the total quantity")
        continue
      }
      items.append(item)
    }
    // One payment request describes one subscription, automatic reload or pre-order. (The context is
    // bound, not its config: a copy of the config on every request would cost more than pricing.)
    if reader.errors.count == before, let context = reader.context, context.config.hasBillingPlans {
      let products = context.config.productsBySKU
      let billed = items.indices.filter { products[items[$0].sku]?.billing != nil }
      if billed.count > 1 {
        let (first, second) = (billed[0], billed[1])
        func kind(_ index: Int) -> String { products[items[index].sku]!.billing!.kind.rawValue }
        reader.fail(
          "\(path())[\(second)].sku",
          "\"\(items[second].sku)\" (\(kind(second))) cannot be in one cart with \(path())[\(first)].sku \"\(items[first].sku)\" (\(kind(first))): "
            + "a payment request describes one subscription, automatic reload or pre-order; check them out separately")
      }
    }
    return reader.errors.count == before ? items : nil
  }
}
