import Foundation

/// What the `applePay:` section configures: the payment processing identity (decrypting tokens),
/// the payment request's extra facts, and the merchant identity for merchant sessions.
struct ApplePaySection {
  var processing: ApplePayMerchant?
  var paymentRequest = PaymentRequestSettings()
  var merchantSession: MerchantSessionSettings?
  var merchantTokens: MerchantTokenSettings?
  /// Where `managementURL` was written (or the section), for the catalog's billing checks.
  var node: YAMLNode?
}

extension ConfigDecoder {
  /// The text of the file `key` names (relative to the config file), or nil (reported).
  func configFile(_ fields: YAMLFields, _ key: String, _ path: String) -> (node: YAMLNode, text: String)? {
    guard let valueNode = fields[key], let name = reader.string(valueNode, "\(path).\(key)") else { return nil }
    let directory = PathText.directory(of: reader.file)
    let resolved = name.hasPrefix("/") || directory.isEmpty ? name : "\(directory)/\(name)"
    guard let data = FileManager.default.contents(atPath: resolved), let text = String(data: data, encoding: .utf8) else {
      reader.report(valueNode, "\(path).\(key)", "cannot read \(resolved) (paths are relative to the config file)")
      return nil
    }
    return (valueNode, text)
  }

  /// `applePay:`. The Payment Processing Certificate and key (`merchantCertificate`,
  /// `merchantPrivateKey`, checked against `merchant.identifier` and each other) come as a pair;
  /// so do the merchant identity certificate and key, which also need `domains`.
  func decodeApplePay(_ node: YAMLNode, merchant: Merchant) -> ApplePaySection? {
    let path = "applePay"
    let processingKeys = ["merchantCertificate", "merchantPrivateKey", "rootCertificate", "maxTokenAgeSeconds"]
    let sessionKeys = ["merchantIdentityCertificate", "merchantIdentityKey", "domains", "merchantSession"]
    let requestKeys = ["shippingType", "managementURL", "billingAgreement", "tokenNotificationURL", "merchantTokens"]
    guard let fields = reader.mapping(node, path, allowed: processingKeys + sessionKeys + requestKeys) else { return nil }
    var section = ApplePaySection(node: node)
    var valid = true

    // The payment processing identity.
    if fields["merchantCertificate"] != nil || fields["merchantPrivateKey"] != nil {
      let certificate = reader.require(fields, "merchantCertificate", in: node, path).flatMap { _ in
        configFile(fields, "merchantCertificate", path)
      }
      let privateKey = reader.require(fields, "merchantPrivateKey", in: node, path).flatMap { _ in
        configFile(fields, "merchantPrivateKey", path)
      }
      let root = fields["rootCertificate"] == nil ? .some(nil) : configFile(fields, "rootCertificate", path).map { Optional($0) }
      var maxAge: Int? = 300
      if let n = fields["maxTokenAgeSeconds"] {
        maxAge = reader.int(n, "\(path).maxTokenAgeSeconds", range: 1...86_400)
      }
      if let certificate, let privateKey, let root, let maxAge {
        do {
          section.processing = try ApplePayMerchant.load(
            certificatePEM: certificate.text, privateKeyPEM: privateKey.text, rootPEM: root?.text,
            merchantIdentifier: merchant.identifier, maxTokenAgeSeconds: maxAge)
        } catch {
          let place = [
            "merchantCertificate": certificate.node, "merchantPrivateKey": privateKey.node, "rootCertificate": root?.node,
          ][error.key] ?? node
          reader.report(place, "\(path).\(error.key)", error.message)
          valid = false
        }
      } else {
        valid = false
      }
    } else {
      for key in ["rootCertificate", "maxTokenAgeSeconds"] where fields[key] != nil {
        reader.report(fields[key], "\(path).\(key)", "applies to the Payment Processing Certificate: set merchantCertificate and merchantPrivateKey too")
        valid = false
      }
    }

    // The payment request's facts.
    if let n = fields["shippingType"], let text = reader.string(n, "\(path).shippingType") {
      if let type = PaymentRequestSettings.ShippingType(rawValue: text) {
        section.paymentRequest.shippingType = type
      } else {
        let valid = PaymentRequestSettings.ShippingType.allCases.map(\.rawValue).joined(separator: ", ")
        reader.report(n, "\(path).shippingType", "must be one of \(valid), got \"\(text)\"")
      }
    }
    for (key, keyPath) in [
      ("managementURL", \PaymentRequestSettings.managementURL),
      ("tokenNotificationURL", \PaymentRequestSettings.tokenNotificationURL),
    ] {
      guard let n = fields[key], let text = reader.string(n, "\(path).\(key)") else { continue }
      if Self.isHTTPSURL(text) {
        section.paymentRequest[keyPath: keyPath] = text
      } else {
        reader.report(n, "\(path).\(key)", "must be an https URL like https://shop.example.com/account, got \"\(text)\"")
        valid = false
      }
    }
    if let n = fields["billingAgreement"] {
      if let text = reader.string(n, "\(path).billingAgreement") { section.paymentRequest.billingAgreement = text } else { valid = false }
    }
    if let n = fields["managementURL"] { section.node = n }

    // The merchant identity for merchant sessions.
    if sessionKeys.contains(where: { fields[$0] != nil }) {
      guard let settings = decodeMerchantSession(fields, node: node, merchant: merchant) else { return nil }
      section.merchantSession = settings
    }
    if let tokensNode = fields["merchantTokens"] {
      guard let identity = section.merchantSession?.identity else {
        reader.report(
          tokensNode, "\(path).merchantTokens",
          "calls Apple with the merchant identity certificate: set merchantIdentityCertificate, merchantIdentityKey and domains too")
        return nil
      }
      guard let settings = decodeMerchantTokens(tokensNode, identity: identity) else { return nil }
      section.merchantTokens = settings
    }
    return valid ? section : nil
  }

  /// `applePay.merchantTokens: {apiBase, trustRoots}`: Apple's Merchant Token Management API,
  /// called with the merchant identity certificate. Both keys optional (Apple's gateway, the system roots).
  func decodeMerchantTokens(_ node: YAMLNode, identity: MerchantIdentity) -> MerchantTokenSettings? {
    let path = "applePay.merchantTokens"
    // `merchantTokens: {}` and a bare `merchantTokens:` both mean Apple's gateway.
    if case .scalar(let scalar) = node, scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" {
      return MerchantTokenSettings(identity: identity)
    }
    guard let fields = reader.mapping(node, path, allowed: ["apiBase", "trustRoots"]) else { return nil }
    var settings = MerchantTokenSettings(identity: identity)
    var valid = true
    if let n = fields["apiBase"], let text = reader.string(n, "\(path).apiBase") {
      if let problem = Gateway.Stripe.originProblem(text, example: MerchantTokenSettings.appleAPIBase) {
        reader.report(n, "\(path).apiBase", problem)
        valid = false
      } else {
        settings.apiBase = text.hasSuffix("/") ? String(text.dropLast()) : text
      }
    } else if fields["apiBase"] != nil {
      valid = false
    }
    if fields["trustRoots"] != nil {
      if let file = configFile(fields, "trustRoots", path) {
        if file.text.contains("-----BEGIN CERTIFICATE-----") {
          settings.trustRootsPEM = file.text
        } else {
          reader.report(file.node, "\(path).trustRoots", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
          valid = false
        }
      } else {
        valid = false
      }
    }
    return valid ? settings : nil
  }

  /// `https://` followed by a host and an optional path, without spaces.
  static func isHTTPSURL(_ text: String) -> Bool {
    guard text.hasPrefix("https://"), text.count > "https://".count, text.count <= 2048 else { return false }
    let rest = text.dropFirst("https://".count)
    return rest.first != "/" && !rest.contains(where: { $0 == " " || $0.isNewline })
  }

  func decodeMerchantSession(_ fields: YAMLFields, node: YAMLNode, merchant: Merchant) -> MerchantSessionSettings? {
    let path = "applePay"
    let certificate = reader.require(fields, "merchantIdentityCertificate", in: node, path).flatMap { _ in
      configFile(fields, "merchantIdentityCertificate", path)
    }
    let key = reader.require(fields, "merchantIdentityKey", in: node, path).flatMap { _ in
      configFile(fields, "merchantIdentityKey", path)
    }
    var domains: [String]?
    if let n = reader.require(fields, "domains", in: node, path) {
      domains = reader.stringList(n, "\(path).domains") { domain in
        Self.isDomainName(domain)
          ? nil : "must be a domain name registered with Apple, like shop.example.com (no scheme, port or path), got \"\(domain)\""
      }?.map { $0.lowercased() }
    }
    var additionalHosts: [String] = []
    var trustRoots: String?
    var connect: Double = 5
    var request: Double = 10
    var valid = true
    if let sessionNode = fields["merchantSession"] {
      let sessionPath = "\(path).merchantSession"
      let keys = ["additionalHosts", "trustRoots", "connectTimeoutSeconds", "requestTimeoutSeconds"]
      guard let session = reader.mapping(sessionNode, sessionPath, allowed: keys) else { return nil }
      if let n = session["additionalHosts"] {
        if let hosts = reader.stringList(n, "\(sessionPath).additionalHosts", validate: { host in
          Self.additionalHostProblem(host)
        }) {
          additionalHosts = hosts
        } else {
          valid = false
        }
      }
      if session["trustRoots"] != nil {
        if let file = configFile(session, "trustRoots", sessionPath) {
          if file.text.contains("-----BEGIN CERTIFICATE-----") {
            trustRoots = file.text
          } else {
            reader.report(file.node, "\(sessionPath).trustRoots", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            valid = false
          }
        } else {
          valid = false
        }
      }
      for (name, target) in [("connectTimeoutSeconds", 0), ("requestTimeoutSeconds", 1)] {
        guard let n = session[name] else { continue }
        guard let value = reader.int(n, "\(sessionPath).\(name)", range: 1...60) else {
          valid = false
          continue
        }
        if target == 0 { connect = Double(value) } else { request = Double(value) }
      }
    }
    guard let certificate, let key, let domains, valid else { return nil }
    do {
      let identity = try MerchantIdentity.load(
        certificatePEM: certificate.text, keyPEM: key.text, merchantIdentifier: merchant.identifier)
      var settings = MerchantSessionSettings(identity: identity, domains: domains)
      settings.urlPolicy = MerchantSessionURLPolicy(additionalHosts: additionalHosts)
      settings.trustRootsPEM = trustRoots
      settings.connectTimeoutSeconds = connect
      settings.requestTimeoutSeconds = request
      return settings
    } catch {
      let place = error.key == "merchantIdentityKey" ? key.node : certificate.node
      reader.report(place, "\(path).\(error.key)", error.message)
      return nil
    }
  }

  /// A DNS name: labels of letters, digits and hyphens, at least two of them, lower or upper case.
  static func isDomainName(_ text: String) -> Bool {
    let labels = text.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2, text.utf8.count <= 253 else { return false }
    return labels.allSatisfy { label in
      (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
        && label.utf8.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || (0x30...0x39).contains($0) || $0 == 0x2D }
    } && !labels.last!.utf8.allSatisfy { (0x30...0x39).contains($0) }
  }

  /// Why `entry` cannot be an additional merchant session host (the URL policy's own check), or nil.
  static func additionalHostProblem(_ entry: String) -> String? {
    MerchantSessionURLPolicy.problem(additionalHost: entry).map {
      "\($0); expected a host name or host:port like localhost:8443, got \"\(entry)\""
    }
  }
}
