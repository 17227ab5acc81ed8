import Crypto
import Foundation
import X509

extension ConfigDecoder {
  /// `appStore:`: the app, its environments and roots, its products and the Server API key.
  func decodeAppStore(_ node: YAMLNode) -> AppStoreSettings? {
    let path = "appStore"
    let keys = ["bundleId", "appAppleId", "environments", "rootCertificates", "products", "api"]
    guard let fields = reader.mapping(node, path, allowed: keys) else { return nil }
    var valid = true
    let bundleId = reader.require(fields, "bundleId", in: node, path).flatMap { n -> String? in
      guard let text = reader.string(n, "\(path).bundleId") else { return nil }
      guard Self.isBundleId(text) else {
        reader.report(n, "\(path).bundleId", "must be a bundle id like com.example.app (letters, digits, dots, hyphens), got \"\(text)\"")
        return nil
      }
      return text
    }
    var appAppleId: Int64?
    if let n = fields["appAppleId"] {
      if let value = reader.int(n, "\(path).appAppleId", range: 1...999_999_999_999) { appAppleId = Int64(value) } else { valid = false }
    }
    var environments = ["Production", "Sandbox"]
    if let n = fields["environments"] {
      let known = AppStoreSettings.knownEnvironments
      if let list = reader.stringList(n, "\(path).environments", validate: { name in
        known.contains(name) ? nil : "must be one of \(known.joined(separator: ", ")), got \"\(name)\""
      }) {
        environments = list
      } else {
        valid = false
      }
    }
    if environments.contains("Production"), appAppleId == nil, valid {
      reader.report(
        fields["environments"] ?? node, "\(path).appAppleId",
        "is required when Production is accepted (environments): the App Store's id of the app, from App Store Connect")
      valid = false
    }
    var roots = [AppStoreSignedDataVerifier.appleRoot]
    if let n = fields["rootCertificates"] {
      if let files = reader.stringList(n, "\(path).rootCertificates") {
        var loaded: [Certificate] = []
        for (index, name) in files.enumerated() {
          let elementPath = "\(path).rootCertificates[\(index)]"
          let resolved = resolve(name)
          guard let bytes = ConfigLoader.readFile(resolved) else {
            reader.report(n, elementPath, "cannot read \(resolved) (paths are relative to the config file)")
            valid = false
            continue
          }
          if let certificate = Self.certificate(bytes) {
            loaded.append(certificate)
          } else {
            reader.report(n, elementPath, "\(resolved) holds no certificate (DER, or PEM -----BEGIN CERTIFICATE-----)")
            valid = false
          }
        }
        roots = loaded
      } else {
        valid = false
      }
    }
    let products = reader.require(fields, "products", in: node, path).flatMap { decodeAppStoreProducts($0, path) }
    var api: AppStoreAPISettings?? = .some(nil)
    if let n = fields["api"] { api = decodeAppStoreAPI(n, "\(path).api", bundleId: bundleId ?? "") }
    guard let bundleId, let products, let api, valid else { return nil }
    return AppStoreSettings(
      bundleId: bundleId, appAppleId: appAppleId, environments: environments, roots: roots, products: products, api: api)
  }

  func resolve(_ name: String) -> String {
    let directory = PathText.directory(of: reader.file)
    return name.hasPrefix("/") || directory.isEmpty ? name : "\(directory)/\(name)"
  }

  static func certificate(_ bytes: [UInt8]) -> Certificate? {
    if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN CERTIFICATE-----") {
      return try? Certificate(pemEncoded: text)
    }
    return try? Certificate(derEncoded: bytes)
  }

  /// Reverse-DNS: letters, digits, hyphens and dots, 1 to 155 bytes.
  static func isBundleId(_ text: String) -> Bool {
    (1...155).contains(text.utf8.count) && text.first != "." && text.last != "."
      && text.utf8.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2E }
  }

  /// `appStore.products`: a list of `{productId, type, entitlement, units | durationDays}`.
  func decodeAppStoreProducts(_ node: YAMLNode, _ parent: String) -> [String: AppStoreProduct]? {
    let path = "\(parent).products"
    guard let entries = reader.sequence(node, path) else { return nil }
    var products: [String: AppStoreProduct] = [:]
    var seen = Set<String>()
    var valid = true
    for (index, entry) in entries.enumerated() {
      let entryPath = "\(path)[\(index)]"
      guard let f = reader.mapping(entry, entryPath, allowed: ["productId", "type", "entitlement", "units", "durationDays"])
      else {
        valid = false
        continue
      }
      let productId = reader.require(f, "productId", in: entry, entryPath).flatMap { n -> String? in
        guard let text = reader.string(n, "\(entryPath).productId") else { return nil }
        guard text.utf8.count <= 255, !text.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) else {
          reader.report(n, "\(entryPath).productId", "must be an App Store product id (at most 255 bytes, no spaces), got \"\(text)\"")
          return nil
        }
        guard seen.insert(text).inserted else {
          reader.report(n, "\(entryPath).productId", "\"\(text)\" is listed twice")
          return nil
        }
        return text
      }
      let kind = reader.require(f, "type", in: entry, entryPath).flatMap { n -> AppStoreProduct.Kind? in
        guard let text = reader.string(n, "\(entryPath).type") else { return nil }
        guard let kind = AppStoreProduct.Kind(rawValue: text) else {
          reader.report(
            n, "\(entryPath).type",
            "must be \(AppStoreProduct.Kind.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
          return nil
        }
        return kind
      }
      let entitlement = reader.require(f, "entitlement", in: entry, entryPath).flatMap { n -> String? in
        guard let text = reader.string(n, "\(entryPath).entitlement") else { return nil }
        guard Self.isIdentifier(text) else {
          reader.report(n, "\(entryPath).entitlement", "must be a name matching \(Self.identifierPattern), got \"\(text)\"")
          return nil
        }
        return text
      }
      var units: Int64?
      var durationDays: Int?
      var entryValid = true
      if kind == .consumable {
        if let n = reader.require(f, "units", in: entry, entryPath) {
          if let value = reader.int(n, "\(entryPath).units", range: 1...1_000_000_000) { units = Int64(value) } else { entryValid = false }
        } else {
          entryValid = false
        }
      } else if let n = f["units"], kind != nil {
        reader.report(n, "\(entryPath).units", "only a consumable credits units; a \(kind!.rawValue) grants its entitlement")
        entryValid = false
      }
      if kind == .nonRenewing {
        if let n = reader.require(f, "durationDays", in: entry, entryPath) {
          if let value = reader.int(n, "\(entryPath).durationDays", range: 1...3660) { durationDays = value } else { entryValid = false }
        } else {
          entryValid = false
        }
      } else if let n = f["durationDays"], kind != nil {
        reader.report(
          n, "\(entryPath).durationDays",
          "only a nonRenewing subscription has a duration here; the App Store dates the others")
        entryValid = false
      }
      guard let productId, let kind, let entitlement, entryValid else {
        valid = false
        continue
      }
      products[productId] = AppStoreProduct(
        productId: productId, kind: kind, entitlement: entitlement, units: units, durationDays: durationDays)
    }
    if valid, products.isEmpty {
      reader.report(node, path, "must list at least one product")
      return nil
    }
    return valid ? products : nil
  }

  /// `appStore.api`: the in-app purchase key (`keyFile`, `keyId`, `issuerId`) and, for a test
  /// server or a proxy, where each environment is served and the roots its TLS is checked against.
  func decodeAppStoreAPI(_ node: YAMLNode, _ path: String, bundleId: String) -> AppStoreAPISettings?? {
    let keys = [
      "keyFile", "keyId", "issuerId", "productionURL", "sandboxURL", "trustRoots", "connectTimeoutSeconds",
      "requestTimeoutSeconds", "maxRetries",
    ]
    guard let f = reader.mapping(node, path, allowed: keys) else { return nil }
    var valid = true
    let key = reader.require(f, "keyFile", in: node, path).flatMap { _ in configFile(f, "keyFile", path) }
    // The file's text is never quoted: it is the key.
    if let key, !key.text.contains("-----BEGIN PRIVATE KEY-----") {
      reader.report(key.node, "\(path).keyFile", "holds no PKCS#8 key (-----BEGIN PRIVATE KEY-----), as App Store Connect's .p8 files do")
      valid = false
    } else if let key, (try? P256.Signing.PrivateKey(pemRepresentation: key.text)) == nil {
      reader.report(
        key.node, "\(path).keyFile",
        "is not a P-256 (ES256) private key: App Store Connect's in-app purchase keys are; download the .p8 again")
      valid = false
    }
    func text(_ name: String, check: (String) -> Bool, expected: String) -> String? {
      guard let n = reader.require(f, name, in: node, path), let value = reader.string(n, "\(path).\(name)") else {
        return nil
      }
      guard check(value) else {
        reader.report(n, "\(path).\(name)", "must be \(expected), got \"\(value)\"")
        return nil
      }
      return value
    }
    let keyId = text(
      "keyId", check: { (1...64).contains($0.utf8.count) && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) } },
      expected: "the key's id from App Store Connect (upper-case letters and digits, like 2X9R4HXF34)")
    let issuerId = text(
      "issuerId", check: { UUID(uuidString: $0) != nil },
      expected: "the issuer id from App Store Connect's Keys page (a UUID)")
    var urls: [String: String] = [:]
    for name in ["productionURL", "sandboxURL"] {
      guard let n = f[name] else { continue }
      guard let value = reader.string(n, "\(path).\(name)") else {
        valid = false
        continue
      }
      guard Self.isHTTPSURL(value) else {
        reader.report(n, "\(path).\(name)", "must be an https:// URL (no trailing path needed), got \"\(value)\"")
        valid = false
        continue
      }
      urls[name] = value.hasSuffix("/") ? String(value.dropLast()) : value
    }
    var trustRoots: String?
    if f["trustRoots"] != nil {
      if let file = configFile(f, "trustRoots", path), file.text.contains("-----BEGIN CERTIFICATE-----") {
        trustRoots = file.text
      } else {
        if let n = f["trustRoots"], configFile(f, "trustRoots", path) != nil {
          reader.report(n, "\(path).trustRoots", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        valid = false
      }
    }
    var timeouts: [String: Double] = [:]
    for name in ["connectTimeoutSeconds", "requestTimeoutSeconds"] {
      guard let n = f[name] else { continue }
      if let value = reader.int(n, "\(path).\(name)", range: 1...120) { timeouts[name] = Double(value) } else { valid = false }
    }
    var maxRetries: Int?
    if let n = f["maxRetries"] {
      if let value = reader.int(n, "\(path).maxRetries", range: 0...10) { maxRetries = value } else { valid = false }
    }
    guard let key, let keyId, let issuerId, valid else { return nil }
    var settings = AppStoreAPISettings(keyPEM: key.text, keyId: keyId, issuerId: issuerId.lowercased(), bundleId: bundleId)
    if let url = urls["productionURL"] { settings.productionURL = url }
    if let url = urls["sandboxURL"] { settings.sandboxURL = url }
    settings.trustRootsPEM = trustRoots
    if let value = timeouts["connectTimeoutSeconds"] { settings.connectTimeoutSeconds = value }
    if let value = timeouts["requestTimeoutSeconds"] { settings.requestTimeoutSeconds = value }
    if let maxRetries { settings.maxRetries = maxRetries }
    return .some(settings)
  }
}
