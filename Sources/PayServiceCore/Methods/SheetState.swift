/// What the payment sheet currently shows, as the pricing methods receive it: the cart, the chosen
/// shipping method, the (redacted) shipping contact, the coupon code and the card.
public struct SheetState: Sendable {
  public var items: [CartItem] = []
  public var shippingMethod: String?
  public var shippingContact: Contact?
  /// As typed; nil when absent. Empty means no coupon.
  public var couponCode: String?
  public var paymentMethod: PaymentMethod?

  /// Members a method can require; the others are optional.
  public enum Field: Hashable, Sendable {
    case shippingMethod, shippingContact, couponCode, paymentMethod
  }

  /// The params of a pricing method: the sheet's members, those in `required` required.
  static func params(required: Set<Field>) -> ObjectShape<SheetState> {
    func presence(_ field: Field, optional: Presence) -> Presence {
      required.contains(field) ? .required : optional
    }
    return ObjectShape(
      blank: { SheetState() },
      [
        .member("items", \.items, .required, CartItem.cartSchema, read: CartItem.readCart),
        .member(
          "shippingMethod", \.shippingMethod, presence(.shippingMethod, optional: .optional),
          required.contains(.shippingMethod)
            ? Shapes.shippingMethodIdentifier
            : .string(
              "The selected shipping method's identifier; priced when offered for the region, else the first offered one.",
              minLength: 1),
          read: ShippingMethod.readIdentifier),
        .member("shippingContact", \.shippingContact, presence(.shippingContact, optional: .optional)),
        .member(
          "couponCode", \.couponCode, presence(.couponCode, optional: .optionalOrNull), Shapes.couponCode,
          read: Coupon.readCode),
        .member("paymentMethod", \.paymentMethod, presence(.paymentMethod, optional: .optionalOrNull)),
      ])
  }

  /// True when the request uses a version 2 pricing input (coupon or card).
  var usesDiscounts: Bool { couponCode != nil || paymentMethod != nil }
}

extension ShippingMethod {
  /// Reads a shipping method identifier, which must name a configured method.
  static let readIdentifier: MemberReader<String> = { value, path, reader in
    guard let identifier = reader.string(value, path()) else { return nil }
    if let context = reader.context, context.config.shippingMethodsByIdentifier[identifier] == nil {
      let known = context.config.shipping.methods.map(\.identifier).joined(separator: ", ")
      reader.fail(path(), "unknown shipping method \"\(identifier)\"; configured: \(known)")
      return nil
    }
    return identifier
  }
}

extension Coupon {
  /// Reads a coupon code as typed: any string of at most 256 bytes (empty means none).
  static let readCode: MemberReader<String> = { value, path, reader in
    guard let code = reader.string(value, path(), nonEmpty: false) else { return nil }
    if code.utf8.count > 256 {
      reader.fail(path(), "must be at most 256 bytes, got \(code.utf8.count)")
      return nil
    }
    return code
  }
}

extension ServiceContext {
  /// Prices the sheet's merchandise with the service clock.
  func merchandise(_ state: SheetState) -> Merchandise {
    pricer.merchandise(
      items: state.items, couponCode: state.couponCode, paymentMethod: state.paymentMethod, now: clock.now())
  }

  /// The sheet priced with the methods offered for its region, the requested one first when offered
  /// (the first is the one priced; none when nothing is offered).
  func price(_ state: SheetState) -> (methods: [ShippingMethod], merchandise: Merchandise, quote: Pricer.Quote) {
    let region = pricer.region(of: state.shippingContact)
    let methods = pricer.orderedMethods(for: region, preferred: state.shippingMethod)
    let merchandise = merchandise(state)
    return (methods, merchandise, pricer.quote(merchandise, method: methods.first, region: region))
  }

  /// `methods` as offered to the sheet for this merchandise, with delivery windows from the clock.
  func offers(_ methods: [ShippingMethod], for merchandise: Merchandise) -> [ShippingMethodOffer] {
    let now = clock.now()
    return methods.map { pricer.offer($0, for: merchandise, now: now) }
  }
}

extension SheetState {
  /// The sheet as the borrowed request path reads it (`BorrowedMethod`): the cart's lines (in the
  /// caller's buffer), the requested shipping method (-1: none) and where it ships.
  struct Borrowed {
    var lineCount: Int
    var preferredMethod: Int
    var place: PricingTable.Place
  }

  /// Scans the params object at `scanner` into `lines` (room for `CartItem.maxItems`), or nil to
  /// decline: anything the general reader would reject or read differently, a coupon or card
  /// (non-null), a product with a billing plan, a contact whose codes `Region.normalize` would
  /// change, and any member given twice.
  static func scanBorrowed(
    _ scanner: inout JSONScanner, table: PricingTable, lines: UnsafeMutableBufferPointer<PricingTable.Line>
  ) -> Borrowed? {
    guard scanner.take(UInt8(ascii: "{")) else { return nil }
    var lineCount = 0
    var preferred = -1
    var country: Range<Int>?
    var area: Range<Int>?
    var postalCode: Range<Int>?
    var seen = 0
    if !scanner.take(UInt8(ascii: "}")) {
      repeat {
        guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return nil }
        let bit: Int
        if scanner.matches(key, "items") {
          bit = 1
          guard let count = scanCart(&scanner, table: table, lines: lines) else { return nil }
          lineCount = count
        } else if scanner.matches(key, "shippingMethod") {
          bit = 2
          guard let identifier = scanner.string(), let method = table.methodIdentifiers.value(for: scanner.slice(identifier))
          else { return nil }
          preferred = method
        } else if scanner.matches(key, "shippingContact") {
          bit = 4
          guard scanContact(&scanner, country: &country, area: &area, postalCode: &postalCode) else { return nil }
        } else if scanner.matches(key, "couponCode") {
          bit = 8
          guard scanner.null() else { return nil }
        } else if scanner.matches(key, "paymentMethod") {
          bit = 16
          guard scanner.null() else { return nil }
        } else {
          return nil
        }
        guard seen & bit == 0 else { return nil }
        seen |= bit
      } while scanner.take(UInt8(ascii: ","))
      guard scanner.take(UInt8(ascii: "}")) else { return nil }
    }
    guard lineCount > 0 else { return nil }
    let countryBytes = country.map { scanner.slice($0) } ?? table.bytes(table.defaultCountry)
    return Borrowed(
      lineCount: lineCount, preferredMethod: preferred,
      place: PricingTable.Place(
        country: countryBytes, area: area.map { scanner.slice($0) }, postalCode: postalCode.map { scanner.slice($0) }))
  }

  /// 1 to 100 items, each a known sku without a billing plan, once, with a plain quantity of 1 to
  /// 9999 (default 1).
  private static func scanCart(
    _ scanner: inout JSONScanner, table: PricingTable, lines: UnsafeMutableBufferPointer<PricingTable.Line>
  ) -> Int? {
    guard scanner.take(UInt8(ascii: "[")) else { return nil }
    var count = 0
    repeat {
      guard count < CartItem.maxItems, scanner.take(UInt8(ascii: "{")) else { return nil }
      var product = -1
      var quantity = -1
      repeat {
        guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return nil }
        if scanner.matches(key, "sku") {
          guard product < 0, let sku = scanner.string(), let index = table.skus.value(for: scanner.slice(sku)),
            table.products[index].pricedPlainly
          else { return nil }
          product = index
        } else if scanner.matches(key, "quantity") {
          guard quantity < 0, let value = scanner.smallInteger(), CartItem.quantityRange.contains(value) else { return nil }
          quantity = value
        } else {
          return nil
        }
      } while scanner.take(UInt8(ascii: ","))
      guard scanner.take(UInt8(ascii: "}")), product >= 0 else { return nil }
      for earlier in 0..<count where lines[earlier].product == Int32(product) { return nil }
      lines[count] = PricingTable.Line(product: Int32(product), quantity: Int32(max(quantity, 1)))
      count += 1
    } while scanner.take(UInt8(ascii: ","))
    guard scanner.take(UInt8(ascii: "]")) else { return nil }
    return count
  }

  /// A contact object: every known member a string of at most `Contact.maxFieldBytes` or null
  /// (`addressLines` an array of at most `Contact.maxAddressLines` such strings, or null), unknown
  /// members skipped; the country, state and postal code kept when given and not empty (each
  /// once, and as `Region.normalize` would leave it). Anything longer declines: the general path
  /// names the field.
  private static func scanContact(
    _ scanner: inout JSONScanner, country: inout Range<Int>?, area: inout Range<Int>?, postalCode: inout Range<Int>?
  ) -> Bool {
    guard scanner.take(UInt8(ascii: "{")) else { return false }
    if scanner.take(UInt8(ascii: "}")) { return true }
    var seen = 0
    repeat {
      guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return false }
      var bit = 0
      if scanner.matches(key, "countryCode") {
        bit = 1
      } else if scanner.matches(key, "administrativeArea") {
        bit = 2
      } else if scanner.matches(key, "postalCode") {
        bit = 4
      }
      if bit != 0 {
        guard seen & bit == 0 else { return false }
        seen |= bit
        if scanner.null() { continue }
        guard let value = scanner.string(), value.count <= Contact.maxFieldBytes else { return false }
        if value.isEmpty { continue }
        guard isNormalized(scanner.slice(value)) else { return false }
        // A country code with a hyphen would be read as a region code by the compiled lookups.
        if bit == 1 && scanner.slice(value).contains(UInt8(ascii: "-")) { return false }
        switch bit {
        case 1: country = value
        case 2: area = value
        default: postalCode = value
        }
      } else if scanner.matches(key, "addressLines") {
        if scanner.null() { continue }
        guard scanner.take(UInt8(ascii: "[")) else { return false }
        if scanner.take(UInt8(ascii: "]")) { continue }
        var lines = 0
        repeat {
          lines += 1
          guard lines <= Contact.maxAddressLines, let line = scanner.string(), line.count <= Contact.maxFieldBytes else {
            return false
          }
        } while scanner.take(UInt8(ascii: ","))
        guard scanner.take(UInt8(ascii: "]")) else { return false }
      } else if Self.contactMembers.table.value(for: scanner.slice(key)) != nil {
        // Any other member the general reader knows: a string or null there (else this declines).
        if scanner.null() { continue }
        guard let value = scanner.string(), value.count <= Contact.maxFieldBytes else { return false }
      } else {
        guard scanner.skipValue() else { return false }
      }
    } while scanner.take(UInt8(ascii: ","))
    return scanner.take(UInt8(ascii: "}"))
  }

  /// The members `Contact.shape` reads, looked up by the scanned key (the table and its memory).
  private static let contactMembers: (table: ByteKeyTable, storage: ByteKeyTable.Storage) = {
    let (table, storage) = ByteKeyTable.make(Contact.shape.keys.map { ($0, 0) })
    return (table, storage)
  }()

  /// Whether `Region.normalize` returns the text as it is: no lowercase letter, no whitespace,
  /// ASCII only.
  private static func isNormalized(_ text: UnsafeRawBufferPointer) -> Bool {
    text.allSatisfy { !($0 >= 0x61 && $0 <= 0x7A) && !Region.isSpace($0) && $0 < 0x80 }
  }
}
