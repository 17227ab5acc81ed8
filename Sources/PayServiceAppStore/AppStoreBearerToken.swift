import Foundation
import PayServiceCore
import Synchronization

/// Why an `AppStoreServerClient` could not be made from its settings. The messages name the
/// setting at fault and never quote the key.
public struct AppStoreClientSetupError: Error, Sendable, Equatable, CustomStringConvertible {
  public enum Reason: Sendable, Equatable {
    /// The key text is not a PEM `PRIVATE KEY` (PKCS#8) block.
    case keyNotPKCS8
    /// A PKCS#8 key, but not a P-256 (ES256) one.
    case keyNotP256
    /// `keyId`, `issuerId` or `bundleId` is empty.
    case missingIdentifier(String)
    /// `trustRootsPEM` holds no certificate that reads.
    case invalidTrustRoots
    /// A base URL that is not an https (or http) URL with a host.
    case invalidBaseURL(AppStoreAPIEnvironment)
  }

  public var reason: Reason

  public init(_ reason: Reason) {
    self.reason = reason
  }

  public var description: String {
    switch reason {
    case .keyNotPKCS8:
      return """
        the App Store Server API key is not a PEM PKCS#8 private key ("-----BEGIN PRIVATE KEY-----"): use the \
        .p8 file App Store Connect gave for the in-app purchase key, unchanged
        """
    case .keyNotP256:
      return """
        the App Store Server API key is not a P-256 (ES256) private key: use the .p8 file of an in-app purchase \
        key from App Store Connect (Users and Access, Integrations, In-App Purchase)
        """
    case .missingIdentifier(let name):
      return "the App Store Server API's \(name) is empty: copy it from App Store Connect"
    case .invalidTrustRoots:
      return "the App Store Server API's trust roots hold no PEM certificate that reads"
    case .invalidBaseURL(let environment):
      return "the App Store Server API's \(environment.rawValue.lowercased()) URL is not an https URL with a host"
    }
  }
}

/// The bearer token of App Store Server API requests, as Apple's "Generating JSON Web Tokens for
/// API requests" (https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests)
/// asks: a compact JWS, ES256 with the in-app purchase key (`ES256JWT`), header
/// `{"alg":"ES256","kid":keyId,"typ":"JWT"}`, payload
/// `{"iss":issuerId,"iat":now,"exp":now+300,"aud":"appstoreconnect-v1","bid":bundleId}`.
///
/// Apple accepts a token until its `exp` (at most an hour after `iat`); a token is made for five
/// minutes and used again until a minute before it expires, so that a burst of requests signs once
/// and no request leaves with a token about to expire on the way.
///
/// The key stays inside `ES256JWT`: it is never described, printed or put in an error.
final class AppStoreBearerToken: Sendable {
  static let audience = "appstoreconnect-v1"
  /// How long a token is good for (`exp - iat`).
  static let lifetimeSeconds: Int64 = 300
  /// A token is made anew this long before its `exp`.
  static let renewalMarginSeconds: Int64 = 60

  private let signer: ES256JWT
  private let keyId: String
  private let issuerId: String
  private let bundleId: String
  private let now: @Sendable () -> Int64
  private let cached = Mutex<(token: String, expires: Int64)?>(nil)

  /// - Parameter now: the clock, unix seconds.
  init(settings: AppStoreAPISettings, now: @escaping @Sendable () -> Int64) throws(AppStoreClientSetupError) {
    do {
      signer = try ES256JWT(pkcs8PEM: settings.keyPEM)
    } catch {
      switch error {
      case .notPKCS8: throw AppStoreClientSetupError(.keyNotPKCS8)
      case .notP256: throw AppStoreClientSetupError(.keyNotP256)
      }
    }
    for (name, value) in [("keyId", settings.keyId), ("issuerId", settings.issuerId), ("bundleId", settings.bundleId)]
    where value.isEmpty {
      throw AppStoreClientSetupError(.missingIdentifier(name))
    }
    keyId = settings.keyId
    issuerId = settings.issuerId
    bundleId = settings.bundleId
    self.now = now
  }

  /// A token good for at least another minute: the cached one, or a new one.
  func current() throws -> String {
    let time = now()
    if let cached = cached.withLock({ $0 }), time < cached.expires - Self.renewalMarginSeconds {
      return cached.token
    }
    let token = try make(issuedAt: time)
    cached.withLock { $0 = (token, time + Self.lifetimeSeconds) }
    return token
  }

  /// A new token issued at `issuedAt` (unix seconds).
  func make(issuedAt: Int64) throws -> String {
    var header = JSONObjectBuilder(capacity: 3)
    header.set("alg", "ES256")
    header.set("kid", keyId)
    header.set("typ", "JWT")
    var payload = JSONObjectBuilder(capacity: 5)
    payload.set("iss", issuerId)
    payload.set("iat", .number(String(issuedAt)))
    payload.set("exp", .number(String(issuedAt + Self.lifetimeSeconds)))
    payload.set("aud", Self.audience)
    payload.set("bid", bundleId)
    return try signer.sign(header: header.object, payload: payload.object)
  }
}
