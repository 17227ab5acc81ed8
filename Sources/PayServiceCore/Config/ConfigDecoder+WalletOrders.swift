import Crypto
import Foundation

extension ConfigDecoder {
  static let walletPackageKeys = [
    "merchantIdentifier", "url", "orderManagementURL", "certificate", "privateKey", "intermediateCertificate",
  ]

  /// `walletOrders:`: Wallet order tracking. `orderTypeIdentifier` and `webServiceURL` give
  /// authorizePayment's order details; the package keys (all of them, together) make payservice
  /// answer Wallet's web service; `apns` makes it push order updates (it needs the package keys).
  func decodeWalletOrders(_ node: YAMLNode, merchant: Merchant) -> WalletOrders? {
    let path = "walletOrders"
    guard
      let fields = reader.mapping(
        node, path, allowed: ["orderTypeIdentifier", "webServiceURL", "apns"] + Self.walletPackageKeys)
    else { return nil }
    var type: String?
    if let n = reader.require(fields, "orderTypeIdentifier", in: node, path),
      let text = reader.string(n, "\(path).orderTypeIdentifier")
    {
      if text.hasPrefix("order.") && text.count > "order.".count && Self.isIdentifier(String(text.dropFirst(6))) {
        type = text
      } else {
        reader.report(n, "\(path).orderTypeIdentifier", "must be an order type identifier like \"order.com.example.shop\", got \"\(text)\"")
      }
    }
    let url = httpsURL(
      fields, "webServiceURL", in: node, path, required: true, example: "https://shop.example.com/wallet")
    guard let type, let url else { return nil }
    var orders = WalletOrders(orderTypeIdentifier: type, webServiceURL: url)
    if Self.walletPackageKeys.contains(where: { fields[$0] != nil }) {
      guard let package = decodeWalletPackage(fields, node, path, type: type, merchant: merchant) else { return nil }
      orders.package = package
    }
    if let n = fields["apns"] {
      guard orders.package != nil else {
        reader.report(
          n, "\(path).apns",
          "needs the order package keys (\(Self.walletPackageKeys.map { "walletOrders.\($0)" }.joined(separator: ", "))): a push makes Wallet fetch the order")
        return nil
      }
      guard let apns = decodeWalletAPNs(n, "\(path).apns") else { return nil }
      orders.apns = apns
    }
    return orders
  }

  /// An https URL at `key`; nil (reported) when missing where required or not https.
  private func httpsURL(
    _ fields: YAMLFields, _ key: String, in parent: YAMLNode, _ path: String, required: Bool, example: String
  ) -> String? {
    guard let n = required ? reader.require(fields, key, in: parent, path) : fields[key] else { return nil }
    guard let text = reader.string(n, "\(path).\(key)") else { return nil }
    guard Self.isHTTPSURL(text) else {
      reader.report(n, "\(path).\(key)", "must be an https URL like \(example), got \"\(text)\"")
      return nil
    }
    return text
  }

  private func decodeWalletPackage(
    _ fields: YAMLFields, _ node: YAMLNode, _ path: String, type: String, merchant: Merchant
  ) -> WalletOrderPackageSettings? {
    var valid = true
    var merchantIdentifier: String?
    if let n = reader.require(fields, "merchantIdentifier", in: node, path),
      let text = reader.string(n, "\(path).merchantIdentifier")
    {
      if text.hasPrefix("merchant.") && text.count > "merchant.".count && Self.isIdentifier(String(text.dropFirst(9))) {
        merchantIdentifier = text
      } else {
        reader.report(n, "\(path).merchantIdentifier", "must be an Apple merchant identifier like \"merchant.com.example.shop\", got \"\(text)\"")
      }
    }
    var merchantURL = merchant.url
    if fields["url"] != nil {
      merchantURL = httpsURL(fields, "url", in: node, path, required: false, example: "https://shop.example.com")
      valid = valid && merchantURL != nil
    } else if merchantURL == nil {
      reader.report(node, "\(path).url", "is required (or merchant.url): Wallet links the order to the merchant's website")
      valid = false
    }
    let management = httpsURL(
      fields, "orderManagementURL", in: node, path, required: true, example: "https://shop.example.com/orders/{orderId}")
    let files = ["certificate", "privateKey", "intermediateCertificate"].map { key in
      reader.require(fields, key, in: node, path).flatMap { _ in configFile(fields, key, path) }
    }
    guard let merchantIdentifier, let merchantURL, let management, valid, let certificate = files[0],
      let key = files[1], let intermediate = files[2]
    else { return nil }
    let signer: WalletOrderSigner
    do {
      signer = try WalletOrderSigner.load(
        certificatePEM: certificate.text, keyPEM: key.text, intermediatePEM: intermediate.text, orderTypeIdentifier: type)
    } catch {
      let at = ["certificate": certificate.node, "privateKey": key.node][error.key] ?? intermediate.node
      reader.report(at, "\(path).\(error.key)", error.message)
      return nil
    }
    return WalletOrderPackageSettings(
      merchantIdentifier: merchantIdentifier, displayName: merchant.displayName, merchantURL: merchantURL,
      orderManagementURL: management, signer: signer)
  }

  /// `walletOrders.apns`: the APNs key (`keyFile`, `keyId`, `teamId`) and where pushes go
  /// (`environment: production|development`, or `apiBase` for a test server, with `trustRoots`).
  private func decodeWalletAPNs(_ node: YAMLNode, _ path: String) -> APNsSettings? {
    let keys = [
      "keyFile", "keyId", "teamId", "environment", "apiBase", "trustRoots", "connectTimeoutSeconds",
      "requestTimeoutSeconds",
    ]
    guard let f = reader.mapping(node, path, allowed: keys) else { return nil }
    var valid = true
    let key = reader.require(f, "keyFile", in: node, path).flatMap { _ in configFile(f, "keyFile", path) }
    // The file's text is never quoted: it is the key.
    if let key, (try? P256.Signing.PrivateKey(pemRepresentation: key.text)) == nil {
      reader.report(
        key.node, "\(path).keyFile",
        "is not a PEM P-256 private key: use the .p8 file of the APNs key from your Apple Developer account, unchanged")
      valid = false
    }
    func identifier(_ name: String, _ what: String) -> String? {
      guard let n = reader.require(f, name, in: node, path), let value = reader.string(n, "\(path).\(name)") else {
        return nil
      }
      guard value.utf8.count == 10, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) })
      else {
        reader.report(n, "\(path).\(name)", "must be \(what) (10 upper-case letters and digits, like 2X9R4HXF34), got \"\(value)\"")
        return nil
      }
      return value
    }
    let keyId = identifier("keyId", "the APNs key's id")
    let teamId = identifier("teamId", "your Apple Developer team id")
    var base: String?
    switch (f["environment"], f["apiBase"]) {
    case (.some(let n), nil):
      switch reader.string(n, "\(path).environment") {
      case "production": base = APNsSettings.productionBase
      case "development": base = APNsSettings.developmentBase
      case let other?: reader.report(n, "\(path).environment", "must be production or development, got \"\(other)\"")
      case nil: break
      }
    case (nil, .some):
      base = httpsURL(f, "apiBase", in: node, path, required: true, example: "https://localhost:8443").map {
        $0.hasSuffix("/") ? String($0.dropLast()) : $0
      }
    case (.some, .some):
      reader.report(node, path, "has both environment and apiBase: give one")
    case (nil, nil):
      reader.report(node, "\(path).environment", "is required (production or development), or apiBase for a test server")
    }
    var trustRoots: String?
    if f["trustRoots"] != nil {
      if let file = configFile(f, "trustRoots", path) {
        if file.text.contains("-----BEGIN CERTIFICATE-----") {
          trustRoots = file.text
        } else {
          reader.report(file.node, "\(path).trustRoots", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
          valid = false
        }
      } else {
        valid = false
      }
    }
    var timeouts: [String: Double] = [:]
    for name in ["connectTimeoutSeconds", "requestTimeoutSeconds"] {
      guard let n = f[name] else { continue }
      if let value = reader.int(n, "\(path).\(name)", range: 1...60) { timeouts[name] = Double(value) } else { valid = false }
    }
    guard let key, let keyId, let teamId, let base, valid else { return nil }
    var settings = APNsSettings(
      keyPEM: key.text, keyId: keyId, teamId: teamId, apiBase: base, trustRoots: trustRoots.map { .pem($0) } ?? .system)
    if let value = timeouts["connectTimeoutSeconds"] { settings.connectTimeoutSeconds = value }
    if let value = timeouts["requestTimeoutSeconds"] { settings.requestTimeoutSeconds = value }
    return settings
  }
}
