/// The order as it will be recorded, priced as authorized: kept with a pending attempt until the
/// gateway answers, so that the order recorded is the one charged whatever the config says then.
struct PreparedOrder: Sendable, WireObject {
  struct Line: Sendable, Equatable, WireObject {
    var sku = ""
    var quantity = 1
    var unitPriceMinor = 0
    var amountMinor = 0
    var discountMinor = 0
    var taxMinor = 0

    static let shape = ObjectShape<Line>(
      blank: { Line() },
      [
        .member("sku", \.sku), .member("quantity", \.quantity), .member("unitPriceMinor", \.unitPriceMinor),
        .member("amountMinor", \.amountMinor), .member("discountMinor", \.discountMinor),
        .member("taxMinor", \.taxMinor),
      ])
  }

  /// The document, without a charge yet (status pending).
  var document = OrderDocument()
  var lines: [Line] = []
  var amountMinor = 0
  var shippingMinor = 0
  var shippingTaxMinor = 0
  /// Priced with tax included (absent in attempts recorded before store v6: tax added).
  var taxIncluded: Bool?
  /// The agreement the order makes (its cart has a line with a billing plan); nil otherwise.
  var agreement: Agreement?

  /// What an order with a billing plan agrees to: the plan's line and the terms of its later payments.
  struct Agreement: Sendable, WireObject {
    var sku = ""
    var quantity = 1
    /// The first payment after the checkout's (`AgreementRow.period`).
    var period = 0
    var terms = AgreementTerms()

    static let shape = ObjectShape<Agreement>(
      blank: { Agreement() },
      [
        .member("sku", \.sku), .member("quantity", \.quantity), .member("period", \.period),
        .member("terms", \.terms),
      ])
  }

  static let shape = ObjectShape<PreparedOrder>(
    blank: { PreparedOrder() },
    [
      .member("document", \.document), .member("lines", \.lines), .member("amountMinor", \.amountMinor),
      .member("shippingMinor", \.shippingMinor), .member("shippingTaxMinor", \.shippingTaxMinor),
      .member("taxIncluded", \.taxIncluded, .optional), .member("agreement", \.agreement, .optional),
    ])

  init() {}

  /// The order `document` records, with its money split as `quote` priced it.
  init(document: OrderDocument, quote: Pricer.Quote) {
    self.document = document
    lines = quote.lines.indices.map { index in
      let line = quote.lines[index]
      return Line(
        sku: line.sku, quantity: line.quantity, unitPriceMinor: Int(line.unitPriceMinor),
        amountMinor: Int(line.amountMinor), discountMinor: Int(quote.lineDiscountMinor(index)),
        taxMinor: Int(quote.lineTaxMinor(index)))
    }
    amountMinor = Int(quote.totalMinor)
    shippingMinor = Int(quote.shippingMinor)
    shippingTaxMinor = Int(quote.shippingTaxMinor)
    taxIncluded = quote.taxIncluded ? true : nil
  }

  func row(chargeId: String, gatewayPaymentId: String?, captured: Bool) -> OrderRow {
    OrderRow(
      orderId: document.orderId, chargeId: chargeId, createdAt: document.createdAt, amountMinor: Int64(amountMinor),
      currencyCode: document.currencyCode, document: JSONWriter.string(document),
      items: lines.map {
        OrderRow.Item(
          sku: $0.sku, quantity: $0.quantity, unitPriceMinor: Int64($0.unitPriceMinor),
          amountMinor: Int64($0.amountMinor), discountMinor: Int64($0.discountMinor), taxMinor: Int64($0.taxMinor))
      },
      status: captured ? .paid : .authorized, capturedMinor: captured ? Int64(amountMinor) : nil,
      shippingMinor: Int64(shippingMinor), shippingTaxMinor: Int64(shippingTaxMinor),
      gatewayPaymentId: gatewayPaymentId, taxIncluded: taxIncluded ?? false, agreementId: document.agreement.flatMap { $0.payment == .checkout ? nil : $0.agreementId })
  }
}
