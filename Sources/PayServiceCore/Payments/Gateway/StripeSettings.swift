import Foundation

/// What kind of Stripe secret key a string is, read from its prefix alone; nil when it is not one.
public enum StripeKeyKind: String, Equatable, Sendable {
  case test
  case live

  public init?(key: String) {
    switch key.prefix(8) {
    case "sk_test_", "rk_test_": self = .test
    case "sk_live_", "rk_live_": self = .live
    default: return nil
    }
  }
}

extension Gateway.Stripe {
  /// Why `text` cannot be the API origin (https, a host, an optional port, nothing else); nil when
  /// it can. The message quotes `text` without its user info: a password never reaches a message.
  static func apiBaseProblem(_ text: String) -> String? {
    originProblem(text, example: "https://api.stripe.com")
  }

  /// Why `text` is not an https origin (scheme, host and port; no path, query or credentials).
  static func originProblem(_ text: String, example: String) -> String? {
    let valid = "must be an https origin like \(example) (no path, query or credentials)"
    guard !text.contains("@"), let url = URL(string: text), url.scheme == "https", let host = url.host, !host.isEmpty,
      url.user == nil, url.password == nil, url.query == nil, url.fragment == nil,
      url.path.isEmpty || url.path == "/"
    else { return "\(valid), got \"\(URLText.withoutUserInfo(text))\"" }
    return nil
  }

  /// Why the secret key in the environment cannot be used; the key itself never appears in it.
  public enum KeyProblem: Error, Equatable, CustomStringConvertible {
    case notSet(variable: String)
    case notASecretKey(variable: String)
    case liveKeyInTestMode(variable: String)
    case testKeyInLiveMode(variable: String)

    public var description: String {
      switch self {
      case .notSet(let variable):
        return "gateway.kind is stripe but the environment variable \(variable) (gateway.secretKeyVariable) is not set"
      case .notASecretKey(let variable):
        return "\(variable) does not hold a Stripe secret key (sk_… or rk_…; a publishable pk_… key cannot charge)"
      case .liveKeyInTestMode(let variable):
        return "\(variable) holds a live key, which moves real money: set gateway.mode: live to use it"
      case .testKeyInLiveMode(let variable):
        return "gateway.mode is live but \(variable) holds a test key"
      }
    }
  }

  /// The secret key from `environment`, checked against the mode: a live key needs `mode: live`,
  /// and live mode needs a live key.
  public func secretKey(environment: [String: String]) -> Result<String, KeyProblem> {
    guard let key = environment[secretKeyVariable], !key.isEmpty else {
      return .failure(.notSet(variable: secretKeyVariable))
    }
    switch (StripeKeyKind(key: key), mode) {
    case (nil, _): return .failure(.notASecretKey(variable: secretKeyVariable))
    case (.live?, .test): return .failure(.liveKeyInTestMode(variable: secretKeyVariable))
    case (.test?, .live): return .failure(.testKeyInLiveMode(variable: secretKeyVariable))
    default: return .success(key)
    }
  }

  /// What `check-config` says of the key: whether it is set and whether it is a test or live key.
  public func keySummary(environment: [String: String]) -> String {
    guard let key = environment[secretKeyVariable], !key.isEmpty else { return "\(secretKeyVariable) not set" }
    guard let kind = StripeKeyKind(key: key) else {
      return "\(secretKeyVariable) set, not a Stripe secret key: serving would stop"
    }
    let fits = (kind == .live) == (mode == .live)
    return "\(secretKeyVariable) set, a \(kind.rawValue) key" + (fits ? "" : ", not for \(mode.rawValue) mode: serving would stop")
  }
}
