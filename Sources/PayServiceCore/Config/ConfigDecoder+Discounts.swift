
/// `coupons` and `paymentMethodAdjustments`: the config sections the payment sheet's coupon field and
/// card choice price with.
extension ConfigDecoder {
  static let couponCodePattern = "[A-Za-z0-9_-]{1,32}"

  static func isCouponCode(_ text: String) -> Bool {
    (1...32).contains(text.utf8.count)
      && text.utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
      }
  }

  func decodeCoupons(_ node: YAMLNode, merchant: Merchant) -> [Coupon]? {
    guard let entries = reader.sequence(node, "coupons") else { return nil }
    var coupons: [Coupon] = []
    var ok = true
    var seen = NameSet()
    let digits = merchant.currency.minorDigits
    for (index, entry) in entries.enumerated() {
      let path = "coupons[\(index)]"
      let keys = ["code", "label", "percentOff", "amountOff", "minimumSubtotal", "expires"]
      guard let f = reader.mapping(entry, path, allowed: keys) else {
        ok = false
        continue
      }
      var code: String?
      if let n = reader.require(f, "code", in: entry, path), let text = reader.string(n, "\(path).code") {
        if !Self.isCouponCode(text) {
          reader.report(n, "\(path).code", "must match \(Self.couponCodePattern), got \"\(text)\"")
        } else if !seen.insert(Coupon.normalize(text)) {
          reader.report(
            n, "\(path).code", "code \"\(text)\" is used by an earlier coupon (codes match case-insensitively)")
        } else {
          code = text
        }
      }
      var label: String? = "Discount"
      if let n = f["label"] { label = reader.string(n, "\(path).label") }
      var discount: Coupon.Discount?
      switch (f["percentOff"], f["amountOff"]) {
      case (let n?, nil):
        discount = reader.percent(n, "\(path).percentOff", range: 0...100, zero: false).map { .percentOff($0) }
      case (nil, let n?):
        discount = reader.amount(n, "\(path).amountOff", digits: digits, allowZero: false).map { .amountOff($0) }
      case (_?, _?):
        reader.report(entry, path, "give exactly one of percentOff or amountOff, not both")
      case (nil, nil):
        reader.report(entry, "\(path).percentOff", "is required (or amountOff): the coupon needs a discount")
      }
      var minimum: Int64?
      var minimumOK = true
      if let n = f["minimumSubtotal"] {
        minimum = reader.amount(n, "\(path).minimumSubtotal", digits: digits, allowZero: true)
        minimumOK = minimum != nil
      }
      var expires: Int64?
      var expiresOK = true
      if let n = f["expires"] {
        expires = reader.timestamp(n, "\(path).expires")
        expiresOK = expires != nil
      }
      guard let code, let label, let discount, minimumOK, expiresOK else {
        ok = false
        continue
      }
      coupons.append(
        Coupon(code: code, label: label, discount: discount, minimumSubtotalMinor: minimum, expires: expires))
    }
    return ok ? coupons : nil
  }

  func decodeAdjustments(_ node: YAMLNode, merchant: Merchant) -> [PaymentMethodAdjustment]? {
    guard let entries = reader.sequence(node, "paymentMethodAdjustments") else { return nil }
    var adjustments: [PaymentMethodAdjustment] = []
    var ok = true
    for (index, entry) in entries.enumerated() {
      let path = "paymentMethodAdjustments[\(index)]"
      guard let f = reader.mapping(entry, path, allowed: ["label", "network", "type", "percent"]) else {
        ok = false
        continue
      }
      let label = reader.require(f, "label", in: entry, path).flatMap { reader.string($0, "\(path).label") }
      var network: String?
      var networkOK = true
      if let n = f["network"] {
        networkOK = false
        if let text = reader.string(n, "\(path).network") {
          if !merchant.supportedNetworks.contains(text) {
            reader.report(
              n, "\(path).network",
              "\"\(text)\" is not in merchant.supportedNetworks (\(merchant.supportedNetworks.joined(separator: ", "))), so it would never match"
            )
          } else {
            network = text
            networkOK = true
          }
        }
      }
      var type: CardType?
      var typeOK = true
      if let n = f["type"] {
        typeOK = false
        if let text = reader.string(n, "\(path).type") {
          type = CardType(rawValue: text)
          typeOK = type != nil
          if type == nil {
            reader.report(
              n, "\(path).type",
              "must be one of \(CardType.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
          }
        }
      }
      let percent = reader.require(f, "percent", in: entry, path).flatMap {
        reader.percent($0, "\(path).percent", range: -100...100, zero: false)
      }
      guard let label, networkOK, typeOK, let percent else {
        ok = false
        continue
      }
      adjustments.append(PaymentMethodAdjustment(label: label, network: network, type: type, percent: percent))
    }
    return ok ? adjustments : nil
  }
}
