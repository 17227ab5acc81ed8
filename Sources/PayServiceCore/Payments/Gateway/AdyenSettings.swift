import Foundation

extension Gateway.Adyen {
  /// Why `text` cannot be the Checkout API's base (https, a host, an optional port and path prefix
  /// such as the live platform's `/checkout`, nothing else); nil when it can. The message quotes
  /// `text` without its user info: a password never reaches a message.
  static func apiBaseProblem(_ text: String) -> String? {
    let valid =
      "must be an https URL like https://checkout-test.adyen.com or https://{PREFIX}-checkout-live.adyenpayments.com/checkout (no query or credentials)"
    guard !text.contains("@"), let url = URL(string: text), url.scheme == "https", let host = url.host, !host.isEmpty,
      url.user == nil, url.password == nil, url.query == nil, url.fragment == nil, !text.contains("?"), !text.contains("#")
    else { return "\(valid), got \"\(URLText.withoutUserInfo(text))\"" }
    return nil
  }

  /// Whether `name` can be a merchant account's name as Adyen's Customer Area shows it.
  static func isMerchantAccount(_ name: String) -> Bool {
    (1...80).contains(name.utf8.count)
      && name.utf8.allSatisfy {
        $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0)
          || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
      }
  }

  /// Why a key in the environment cannot be used; a key itself never appears in it.
  public enum KeyProblem: Error, Equatable, CustomStringConvertible {
    case apiKeyNotSet(variable: String)
    case apiKeyMalformed(variable: String)
    case hmacKeyNotSet(variable: String)
    case hmacKeyMalformed(String)

    public var description: String {
      switch self {
      case .apiKeyNotSet(let variable):
        return "gateway.kind is adyen but the environment variable \(variable) (gateway.apiKeyVariable) is not set"
      case .apiKeyMalformed(let variable):
        return "\(variable) does not hold an Adyen API key (one line of printable characters, as the Customer Area shows it)"
      case .hmacKeyNotSet(let variable):
        return
          "gateway.kind is adyen but the environment variable \(variable) (gateway.hmacKeyVariable) is not set: Adyen's notifications could not be verified"
      case .hmacKeyMalformed(let why): return why
      }
    }
  }

  /// The API key from `environment`. Adyen's keys carry no mark of their platform: `mode` and
  /// `apiBase` say which one is used.
  public func apiKey(environment: [String: String]) -> Result<String, KeyProblem> {
    guard let key = environment[apiKeyVariable], !key.isEmpty else { return .failure(.apiKeyNotSet(variable: apiKeyVariable)) }
    guard key.utf8.count <= 4096, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
      return .failure(.apiKeyMalformed(variable: apiKeyVariable))
    }
    return .success(key)
  }

  /// The notifications' HMAC keys from `environment` (one, or two during a rotation).
  public func hmacKeys(environment: [String: String]) -> Result<[[UInt8]], KeyProblem> {
    guard let value = environment[hmacKeyVariable], !value.isEmpty else {
      return .failure(.hmacKeyNotSet(variable: hmacKeyVariable))
    }
    switch AdyenNotificationSignature.keys(in: value, variable: hmacKeyVariable) {
    case .success(let keys): return .success(keys)
    case .failure(let problem): return .failure(.hmacKeyMalformed(problem.description))
    }
  }

  /// What `check-config` says of the keys: whether each is set and usable, never the keys.
  public func keySummary(environment: [String: String]) -> String {
    let api: String
    switch apiKey(environment: environment) {
    case .success: api = "\(apiKeyVariable) set"
    case .failure(.apiKeyNotSet): api = "\(apiKeyVariable) not set"
    case .failure: api = "\(apiKeyVariable) set, not an API key: serving would stop"
    }
    let hmac: String
    switch hmacKeys(environment: environment) {
    case .success(let keys): hmac = "\(hmacKeyVariable) set, \(keys.count) key\(keys.count == 1 ? "" : "s")"
    case .failure(.hmacKeyNotSet): hmac = "\(hmacKeyVariable) not set"
    case .failure: hmac = "\(hmacKeyVariable) set, not an HMAC key: serving would stop"
    }
    return "\(api), \(hmac)"
  }
}
