import Foundation

extension ConfigDecoder {
  /// The members every remote gateway reads (`RemoteGatewaySettings`).
  static let remoteGatewayKeys = [
    "mode", "apiBase", "trustRoots", "connectTimeoutSeconds", "requestTimeoutSeconds", "maxRetries",
    "maxConcurrentCalls",
  ]
  static let stripeKeys = ["secretKeyVariable", "webhookSecretVariable"]
  static let adyenKeys = ["merchantAccount", "apiKeyVariable", "hmacKeyVariable"]

  /// `gateway:`: who takes the money, and how payservice reaches it.
  func decodeGateway(_ node: YAMLNode) -> Gateway? {
    guard refusesSecrets(in: node) else { return nil }
    let remoteKeys = Self.remoteGatewayKeys + Self.stripeKeys + Self.adyenKeys
    guard
      let fields = reader.mapping(node, "gateway", allowed: ["kind", "chargeTokenTTLSeconds", "capture"] + remoteKeys)
    else {
      return nil
    }
    var kind: Gateway.Kind?
    if let n = reader.require(fields, "kind", in: node, "gateway"), let text = reader.string(n, "gateway.kind") {
      kind = Gateway.Kind(rawValue: text)
      if kind == nil { reader.report(n, "gateway.kind", "must be sandbox, stripe or adyen, got \"\(text)\"") }
    }
    var ttl: Int? = 3600
    if let n = fields["chargeTokenTTLSeconds"] {
      ttl = reader.int(n, "gateway.chargeTokenTTLSeconds", range: 1...604_800)
    }
    var capture: Gateway.Capture? = .automatic
    if let n = fields["capture"], let text = reader.string(n, "gateway.capture") {
      capture = Gateway.Capture(rawValue: text)
      if capture == nil { reader.report(n, "gateway.capture", "must be automatic or manual, got \"\(text)\"") }
    }
    guard let kind else { return nil }
    // A member of another gateway's settings is a mistake worth naming, not just an unknown key.
    let own: [String]
    switch kind {
    case .sandbox: own = []
    case .stripe: own = Self.remoteGatewayKeys + Self.stripeKeys
    case .adyen: own = Self.remoteGatewayKeys + Self.adyenKeys
    }
    for key in remoteKeys where fields[key] != nil && !own.contains(key) {
      let owners = [Gateway.Kind.stripe, .adyen].filter { other in
        (other == .stripe ? Self.stripeKeys : Self.adyenKeys).contains(key) || Self.remoteGatewayKeys.contains(key)
      }
      reader.report(
        fields[key], "gateway.\(key)",
        "applies to gateway.kind \(owners.map(\.rawValue).joined(separator: " or ")) only; this gateway is \(kind.rawValue)")
      return nil
    }
    var gateway = Gateway(kind: kind, chargeTokenTTLSeconds: ttl ?? 0, capture: capture ?? .automatic)
    switch kind {
    case .sandbox: break
    case .stripe:
      guard let settings = decodeStripe(fields) else { return nil }
      gateway.stripe = settings
    case .adyen:
      guard let settings = decodeAdyen(fields, in: node) else { return nil }
      gateway.adyen = settings
    }
    guard ttl != nil, capture != nil else { return nil }
    return gateway
  }

  /// Reports a secret written into the file with its own message (not just "unknown key"): keys
  /// come from the environment only, so a config file can be shared and committed. False when one
  /// was found.
  func refusesSecrets(in node: YAMLNode) -> Bool {
    guard case .mapping(let mapping) = node else { return true }
    var kind = Gateway.Kind.stripe
    for (keyNode, value) in mapping {
      if case .scalar(let key) = keyNode, key.string == "kind", let text = value.string, let named = Gateway.Kind(rawValue: text) {
        kind = named
      }
    }
    for (keyNode, value) in mapping {
      guard case .scalar(let key) = keyNode else { continue }
      let text = value.string
      let looksSecret = ["secretKey", "apiKey", "key", "secret"].contains(key.string)
        || (text.map { StripeKeyKind(key: $0) != nil } ?? false)
      if looksSecret {
        let variable =
          kind == .adyen
          ? "gateway.apiKeyVariable (default ADYEN_API_KEY)" : "gateway.secretKeyVariable (default STRIPE_SECRET_KEY)"
        reader.report(
          value, "gateway.\(key.string)",
          "a secret key is never written in the config: set it in the environment variable named by \(variable)")
        return false
      }
      if key.string == "webhookSecret" || (text?.hasPrefix("whsec_") ?? false) {
        reader.report(
          value, "gateway.\(key.string)",
          "a webhook signing secret is never written in the config: set it in the environment variable named by gateway.webhookSecretVariable (default STRIPE_WEBHOOK_SECRET)"
        )
        return false
      }
      if key.string == "hmacKey" {
        reader.report(
          value, "gateway.\(key.string)",
          "an HMAC key is never written in the config: set it in the environment variable named by gateway.hmacKeyVariable (default ADYEN_HMAC_KEY)"
        )
        return false
      }
    }
    return true
  }

  /// The Stripe settings of `gateway`; nil (with the problems reported) when one is invalid.
  func decodeStripe(_ fields: YAMLFields) -> Gateway.Stripe? {
    var settings = Gateway.Stripe()
    var valid = decodeRemote(fields, into: &settings, apiBaseProblem: Gateway.Stripe.apiBaseProblem)
    valid = decodeVariable(fields, "secretKeyVariable", "STRIPE_SECRET_KEY", into: &settings.secretKeyVariable) && valid
    valid = decodeVariable(fields, "webhookSecretVariable", "STRIPE_WEBHOOK_SECRET", into: &settings.webhookSecretVariable) && valid
    return valid ? settings : nil
  }

  /// The Adyen settings of `gateway`; nil (with the problems reported) when one is invalid.
  func decodeAdyen(_ fields: YAMLFields, in node: YAMLNode) -> Gateway.Adyen? {
    var settings = Gateway.Adyen()
    var valid = decodeRemote(fields, into: &settings, apiBaseProblem: Gateway.Adyen.apiBaseProblem)
    valid = decodeVariable(fields, "apiKeyVariable", "ADYEN_API_KEY", into: &settings.apiKeyVariable) && valid
    valid = decodeVariable(fields, "hmacKeyVariable", "ADYEN_HMAC_KEY", into: &settings.hmacKeyVariable) && valid
    if let n = reader.require(fields, "merchantAccount", in: node, "gateway"),
      let name = reader.string(n, "gateway.merchantAccount")
    {
      if Gateway.Adyen.isMerchantAccount(name) {
        settings.merchantAccount = name
      } else {
        reader.report(
          n, "gateway.merchantAccount",
          "must be the merchant account's name as Adyen's Customer Area shows it (1 to 80 letters, digits, _ . -)")
        valid = false
      }
    } else {
      valid = false
    }
    if settings.mode == .live && fields["apiBase"] == nil {
      reader.report(
        fields["mode"] ?? node, "gateway.apiBase",
        "is required with mode live: your live Checkout endpoint, https://{PREFIX}-checkout-live.adyenpayments.com/checkout (Customer Area, Developers > API URLs)"
      )
      valid = false
    } else if settings.mode == .live && settings.apiBase == Gateway.Adyen.testAPIBase {
      reader.report(fields["apiBase"], "gateway.apiBase", "is Adyen's test platform, which mode live cannot use")
      valid = false
    }
    return valid ? settings : nil
  }

  /// An environment variable's name at `member`, into `value`; false (reported) when it is not one.
  func decodeVariable(_ fields: YAMLFields, _ member: String, _ example: String, into value: inout String) -> Bool {
    guard let n = fields[member] else { return true }
    guard let name = reader.string(n, "gateway.\(member)") else { return false }  // reported: not a non-empty string
    guard
      name.utf8.allSatisfy({
        $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
      }), !(0x30...0x39).contains(name.utf8.first!)
    else {
      reader.report(n, "gateway.\(member)", "must be an environment variable name like \(example) (letters, digits, _)")
      return false
    }
    value = name
    return true
  }

  /// The members every remote gateway has, into `settings`; false (reported) when one is invalid.
  func decodeRemote<Settings: RemoteGatewaySettings>(
    _ fields: YAMLFields, into settings: inout Settings, apiBaseProblem: (String) -> String?
  ) -> Bool {
    var valid = true
    if let n = fields["mode"], let text = reader.string(n, "gateway.mode") {
      if let mode = Gateway.Mode(rawValue: text) {
        settings.mode = mode
      } else {
        reader.report(n, "gateway.mode", "must be test or live, got \"\(text)\"")
        valid = false
      }
    }
    if let n = fields["apiBase"], let text = reader.string(n, "gateway.apiBase") {
      if let problem = apiBaseProblem(text) {
        reader.report(n, "gateway.apiBase", problem)
        valid = false
      } else {
        settings.apiBase = text.hasSuffix("/") ? String(text.dropLast()) : text
      }
    }
    if let n = fields["trustRoots"], let name = reader.string(n, "gateway.trustRoots") {
      let directory = PathText.directory(of: reader.file)
      let resolved = name.hasPrefix("/") || directory.isEmpty ? name : "\(directory)/\(name)"
      if let data = FileManager.default.contents(atPath: resolved),
        String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
      {
        settings.trustRoots = resolved
      } else {
        reader.report(n, "gateway.trustRoots", "cannot read PEM certificates from \(resolved) (paths are relative to the config file)")
        valid = false
      }
    }
    func seconds(_ key: String, _ keyPath: WritableKeyPath<Settings, Double>) {
      guard let n = fields[key] else { return }
      if let value = reader.int(n, "gateway.\(key)", range: 1...600) {
        settings[keyPath: keyPath] = Double(value)
      } else {
        valid = false
      }
    }
    seconds("connectTimeoutSeconds", \.connectTimeoutSeconds)
    seconds("requestTimeoutSeconds", \.requestTimeoutSeconds)
    if let n = fields["maxRetries"] {
      if let value = reader.int(n, "gateway.maxRetries", range: 0...10) { settings.maxRetries = value } else { valid = false }
    }
    if let n = fields["maxConcurrentCalls"] {
      if let value = reader.int(n, "gateway.maxConcurrentCalls", range: 1...1024) {
        settings.maxConcurrentCalls = value
      } else {
        valid = false
      }
    }
    return valid
  }
}
